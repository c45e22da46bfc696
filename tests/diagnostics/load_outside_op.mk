// load is only valid inside an op body.
fn first(x: f32[64]) -> f32[16] {
  let y = load x[0 : +16];
  return y;
}

// CHECK:EXIT: 1
// CHECK: load_outside_op.mk:3:11: error: load is only valid inside an op body [E0507]
// CHECK:     3 |   let y = load x[0 : +16];
// CHECK:       |           ^~~~~~~~~~~~~~~
