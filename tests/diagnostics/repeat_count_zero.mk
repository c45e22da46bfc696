// A repeat of zero rows would be an empty tile.
op spread<N>(v: f32[N]) -> y: f32[1, N]
  tasks t in 1
{
  store y[0 : +1, 0 : +N] = repeat_cols(load v[0 : +N], 0);
}

// CHECK:EXIT: 1
// CHECK: repeat_count_zero.mk:5:57: error: 'repeat_cols' needs a positive compile-time int count, found 0 [E0519]
// CHECK:     5 |   store y[0 : +1, 0 : +N] = repeat_cols(load v[0 : +N], 0);
// CHECK:       |                                                         ^
