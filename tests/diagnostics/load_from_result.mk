// An op result is write-only inside its op.
op accumulate<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
  store y[0 : +N] = load y[0 : +N] * 2.0;
}

// CHECK:EXIT: 1
// CHECK: load_from_result.mk:6:26: error: cannot load from op result 'y': results are write-only inside their op [E0506]
// CHECK:     6 |   store y[0 : +N] = load y[0 : +N] * 2.0;
// CHECK:       |                          ^
