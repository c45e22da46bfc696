// Builtins take no named arguments.
op sq<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  let v = load x[0 : +N];
  store y[0 : +N] = pow(v, b = 2.0);
}

// CHECK:EXIT: 1
// CHECK: builtin_named_arg.mk:6:28: error: 'pow' takes no named arguments [E0518]
// CHECK:     6 |   store y[0 : +N] = pow(v, b = 2.0);
// CHECK:       |                            ^
