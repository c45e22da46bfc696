op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

group layer[l in 0 .. 2] {
  weight norm: f32[64] = "model.layers.{l}.norm.weight";
}

// A group element parameter: 'gain' is not a member of 'layer'.
fn run(w: layer) -> f32[64] {
  let y = copy(w.gain);
  return y;
}

// CHECK:EXIT: 1
// CHECK: group_element_member_in_fn.mk:13:18: error: group 'layer' has no member 'gain' [E0417]
// CHECK:    13 |   let y = copy(w.gain);
// CHECK:       |                  ^~~~
