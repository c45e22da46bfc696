// exp takes one argument.
op softmax_num<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  let v = load x[0 : +N];
  store y[0 : +N] = exp(v, max(v));
}

// CHECK:EXIT: 1
// CHECK: builtin_arity.mk:6:21: error: 'exp' takes 1 argument, found 2 [E0517]
// CHECK:     6 |   store y[0 : +N] = exp(v, max(v));
// CHECK:       |                     ^~~~~~~~~~~~~~
