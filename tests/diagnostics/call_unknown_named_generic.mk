op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// copy has generic N, not M.
fn run(x: f32[8]) -> f32[8] {
  let y = copy(x, M = 8);
  return y;
}

// CHECK:EXIT: 1
// CHECK: call_unknown_named_generic.mk:9:19: error: 'copy' has no generic parameter 'M'; did you mean 'N'? [E0552]
// CHECK:     9 |   let y = copy(x, M = 8);
// CHECK:       |                   ^
// CHECK: call_unknown_named_generic.mk:1:4: note: 'copy' is declared here
// CHECK:     1 | op copy<N>(x: f32[N]) -> y: f32[N]
// CHECK:       |    ^~~~
