op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

group layer[l in 0 .. 2] {
  weight norm: f32[64] = "model.layers.{l}.norm.weight";
}

// The group has elements 0 and 1; index 2 is out of range.
fn run() -> f32[64] {
  let y = copy(layer[2].norm);
  return y;
}

// CHECK:EXIT: 1
// CHECK: group_index_out_of_range.mk:13:22: error: index 2 is out of range for group 'layer' (0 .. 2) [E0416]
// CHECK:    13 |   let y = copy(layer[2].norm);
// CHECK:       |                      ^
// CHECK: group_index_out_of_range.mk:7:7: note: 'layer' is declared here
// CHECK:     7 | group layer[l in 0 .. 2] {
// CHECK:       |       ^~~~~
