// A slice is `start : +len`; `start : end` is a syntax error at the length.
op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  let v = load x[0 : N];
  store y[0 : +N] = v;
}

// CHECK:EXIT: 1
// CHECK: slice_without_plus.mk:5:22: error: expected '+', found name 'N' [E0005]
// CHECK:     5 |   let v = load x[0 : N];
// CHECK:       |                      ^
