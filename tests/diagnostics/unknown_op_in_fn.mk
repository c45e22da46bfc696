// A call of an op that does not exist, close to one that does.
op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

fn twice(x: f32[8]) -> f32[8] {
  let y = cpy(x);
  return y;
}

// CHECK:EXIT: 1
// CHECK: unknown_op_in_fn.mk:9:11: error: unknown name 'cpy'; did you mean 'copy'? [E0108]
// CHECK:     9 |   let y = cpy(x);
// CHECK:       |           ^~~
