op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

group layer[l in 0 .. 2] {
  weight norm: f32[8] = "model.layers.{l}.norm";
}

// A step result is a tensor or scalar, not a group element.
step decode(x: f32[8]) -> (y: f32[8], w: layer) {
  let y = copy(x);
  return (y, layer[0]);
}

// CHECK:EXIT: 1
// CHECK: step_result_group_type.mk:12:42: error: step result 'w' must be a tensor or scalar, found layer element [E0705]
// CHECK:    12 | step decode(x: f32[8]) -> (y: f32[8], w: layer) {
// CHECK:       |                                          ^~~~~
