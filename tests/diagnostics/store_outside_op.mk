// store is only valid inside an op body.
state cache: f32[64];

fn clear(x: f32[64]) {
  store cache[0 : +64] = x;
}

// CHECK:EXIT: 1
// CHECK: store_outside_op.mk:5:3: error: store is only valid inside an op body [E0508]
// CHECK:     5 |   store cache[0 : +64] = x;
// CHECK:       |   ^~~~~~~~~~~~~~~~~~~~~~~~~
