op split<N>(x: f32[N]) -> (lo: f32[N / 2], hi: f32[N / 2])
  tasks t in 1
{
  let v = load x[0 : +N];
  store lo[0 : +N / 2] = v[0 : +N / 2];
  store hi[0 : +N / 2] = v[N / 2 : +N / 2];
}
op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// A var keeps its type: f32[8] cannot be rebound to f32[4].
fn run(x: f32[8]) -> f32[8] {
  var y: f32[8] = copy(x);
  let (lo, hi) = split(y);
  y = copy(lo);
  return y;
}

// CHECK:EXIT: 1
// CHECK: rebind_var_different_shape.mk:18:7: error: cannot rebind 'y' (f32[8]) to f32[4] [E0714]
// CHECK:    18 |   y = copy(lo);
// CHECK:       |       ^~~~~~~~
// CHECK: rebind_var_different_shape.mk:16:7: note: 'y' is declared here
// CHECK:    16 |   var y: f32[8] = copy(x);
// CHECK:       |       ^
