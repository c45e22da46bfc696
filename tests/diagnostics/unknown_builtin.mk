// A misspelled builtin gets a did-you-mean hint.
op norm<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  let v = load x[0 : +N];
  store y[0 : +N] = v * rsqr(mean(v * v));
}

// CHECK:EXIT: 1
// CHECK: unknown_builtin.mk:6:25: error: unknown function 'rsqr'; did you mean 'rsqrt'? [E0516]
// CHECK:     6 |   store y[0 : +N] = v * rsqr(mean(v * v));
// CHECK:       |                         ^~~~
