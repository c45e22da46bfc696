op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// Arithmetic on tensors belongs in an op.
fn run(x: f32[8]) -> f32[8] {
  let y = copy(x);
  let z = y + x;
  return z;
}

// CHECK:EXIT: 1
// CHECK: tensor_arith_in_fn.mk:10:11: error: '+' on tensor 'y': runtime arithmetic is written inside ops; fns and the step compose op calls [E0567]
// CHECK:    10 |   let z = y + x;
// CHECK:       |           ^~~~~
