op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

weight norm: f32[64] = "model.norm.weight";

// Only groups are indexed in a fn; 'norm' is a weight.
fn run() -> f32[64] {
  let y = copy(norm[0]);
  return y;
}

// CHECK:EXIT: 1
// CHECK: index_not_indexable.mk:11:16: error: cannot index weight 'norm' in a fn or step; its regions are loaded inside ops [E0418]
// CHECK:    11 |   let y = copy(norm[0]);
// CHECK:       |                ^~~~~~~
