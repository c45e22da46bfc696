// A state is a tensor: it needs a shape.
state counter: i32;

// CHECK:EXIT: 1
// CHECK: state_without_shape.mk:2:16: error: state 'counter' needs a shape, e.g. i32[N] [E0303]
// CHECK:     2 | state counter: i32;
// CHECK:       |                ^~~
