op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// copy takes one argument.
fn run(x: f32[8], z: f32[8]) -> f32[8] {
  let y = copy(x, z);
  return y;
}

// CHECK:EXIT: 1
// CHECK: call_wrong_arg_count.mk:9:11: error: 'copy' takes 1 argument, found 2 [E0551]
// CHECK:     9 |   let y = copy(x, z);
// CHECK:       |           ^~~~~~~~~~
// CHECK: call_wrong_arg_count.mk:1:4: note: 'copy' is declared here
// CHECK:     1 | op copy<N>(x: f32[N]) -> y: f32[N]
// CHECK:       |    ^~~~
