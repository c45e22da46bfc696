// load reads a tensor parameter; 'pos' is a scalar.
op at<N>(x: f32[N], pos: i32) -> y: f32
  tasks t in 1
{
  store y = load pos[0];
}

// CHECK:EXIT: 1
// CHECK: load_from_scalar.mk:5:18: error: load reads a region of a tensor parameter; found i32 [E0505]
// CHECK:     5 |   store y = load pos[0];
// CHECK:       |                  ^~~
