op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// The only sync scope is `grid`.
fn run(x: f32[8]) -> f32[8] {
  let a = copy(x);
  sync cluster;
  let b = copy(a);
  return b;
}

// CHECK:EXIT: 1
// CHECK: sync_cluster.mk:10:8: error: unknown sync scope 'cluster'; write `sync grid;` [E0608]
// CHECK:    10 |   sync cluster;
// CHECK:       |        ^~~~~~~
