// The count of repeat_rows is part of the result's shape, so it must be a positive
// compile-time int: a runtime scalar (here the op's parameter) cannot be.
op spread<N>(v: f32[N], m: i32) -> y: f32[4, N]
  tasks t in 1
{
  store y[0 : +4, 0 : +N] = repeat_rows(load v[0 : +N], m);
}

// CHECK:EXIT: 1
// CHECK: repeat_count.mk:6:57: error: 'repeat_rows' needs a positive compile-time int count, found i32 [E0519]
// CHECK:     6 |   store y[0 : +4, 0 : +N] = repeat_rows(load v[0 : +N], m);
// CHECK:       |                                                         ^
