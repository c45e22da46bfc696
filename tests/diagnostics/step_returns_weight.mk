op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

weight table: f32[8] = "model.table";

// A step result must be computed by an op, not be a weight.
step decode(x: f32[8]) -> (y: f32[8], t: f32[8]) {
  let y = copy(x);
  return (y, table);
}

// CHECK:EXIT: 1
// CHECK: step_returns_weight.mk:12:14: error: result 't' returns weight 'table' directly; results must be computed by ops [E0711]
// CHECK:    12 |   return (y, table);
// CHECK:       |              ^~~~~
