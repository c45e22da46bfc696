// sync belongs in a fn or step, not in an op body.
op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  let v = load x[0 : +N];
  sync grid;
  store y[0 : +N] = v;
}

// CHECK:EXIT: 1
// CHECK: sync_inside_op.mk:6:3: error: sync (it goes between op calls in a fn or step) is not allowed inside an op body [E0527]
// CHECK:     6 |   sync grid;
// CHECK:       |   ^~~~~~~~~~
