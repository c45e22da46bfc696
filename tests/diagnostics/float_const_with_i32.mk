// A compile-time float cannot be combined with an i32 tile.
op halve<N>(x: i32[N]) -> y: i32[N]
  tasks t in 1
{
  let v = load x[0 : +N];
  store y[0 : +N] = v * 0.5;
}

// CHECK:EXIT: 1
// CHECK: float_const_with_i32.mk:6:25: error: compile-time float 0.5 cannot be combined with i32[N]; only float dtypes take float constants [E0307]
// CHECK:     6 |   store y[0 : +N] = v * 0.5;
// CHECK:       |                         ^~~
