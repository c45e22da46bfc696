const hidden = 64;

// 'hidden' is a constant, not an op or fn.
fn run(x: f32[64]) -> f32[64] {
  let y = hidden(x);
  return y;
}

// CHECK:EXIT: 1
// CHECK: call_not_callable.mk:5:11: error: 'hidden' is a constant, not an op or fn [E0562]
// CHECK:     5 |   let y = hidden(x);
// CHECK:       |           ^~~~~~
// CHECK: call_not_callable.mk:1:7: note: 'hidden' is declared here
// CHECK:     1 | const hidden = 64;
// CHECK:       |       ^~~~~~
