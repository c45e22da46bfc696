// Every op result must be stored.
op split<N>(x: f32[N]) -> (lo: f32[N], hi: f32[N])
  tasks t in 1
{
  store lo[0 : +N] = load x[0 : +N];
}

// CHECK:EXIT: 1
// CHECK: op_result_never_stored.mk:2:40: error: op result 'hi' is never stored [E0524]
// CHECK:     2 | op split<N>(x: f32[N]) -> (lo: f32[N], hi: f32[N])
// CHECK:       |                                        ^~
