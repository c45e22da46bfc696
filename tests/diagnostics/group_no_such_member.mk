op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

group layer[l in 0 .. 2] {
  weight norm: f32[64] = "model.layers.{l}.norm.weight";
}

// 'nrom' is not a member of the group.
fn run() -> f32[64] {
  let y = copy(layer[0].nrom);
  return y;
}

// CHECK:EXIT: 1
// CHECK: group_no_such_member.mk:13:25: error: group 'layer' has no member 'nrom'; did you mean 'norm'? [E0417]
// CHECK:    13 |   let y = copy(layer[0].nrom);
// CHECK:       |                         ^~~~
