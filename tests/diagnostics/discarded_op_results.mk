op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// A bare call statement discards the results of an op that writes no state.
fn run(x: f32[8]) -> f32[8] {
  copy(x);
  let y = copy(x);
  return y;
}

// CHECK:EXIT: 1
// CHECK: discarded_op_results.mk:9:3: error: the results of 'copy' are discarded; bind them with let [E0565]
// CHECK:     9 |   copy(x);
// CHECK:       |   ^~~~~~~
