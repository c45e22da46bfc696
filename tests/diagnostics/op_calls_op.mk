op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// An op body cannot call another op.
op twice<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  let v = copy(x);
  store y[0 : +N] = load x[0 : +N] * 2.0;
}

// CHECK:EXIT: 1
// CHECK: op_calls_op.mk:11:11: error: ops cannot call 'copy'; compose ops in a fn [E0515]
// CHECK:    11 |   let v = copy(x);
// CHECK:       |           ^~~~
