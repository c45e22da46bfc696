op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// @cluster goes on an op declaration, not on a call.
fn run(x: f32[8]) -> f32[8] {
  @cluster(2) let b = copy(x);
  return b;
}

// CHECK:EXIT: 1
// CHECK: cluster_on_let.mk:9:3: error: '@cluster' applies to an op declaration [E0602]
// CHECK:     9 |   @cluster(2) let b = copy(x);
// CHECK:       |   ^~~~~~~~~~~
