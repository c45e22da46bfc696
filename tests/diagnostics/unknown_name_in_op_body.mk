// An unknown name inside an op body, close to a parameter name.
op scale<N>(x: f32[N], factor: f32) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N] * facter;
}

// CHECK:EXIT: 1
// CHECK: unknown_name_in_op_body.mk:5:38: error: unknown name 'facter'; did you mean 'factor'? [E0108]
// CHECK:     5 |   store y[0 : +N] = load x[0 : +N] * facter;
// CHECK:       |                                      ^~~~~~
