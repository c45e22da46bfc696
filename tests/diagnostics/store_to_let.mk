// store writes a result or an inout parameter, not a tile.
op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  let v = load x[0 : +N];
  store v[0 : +N] = v * 2.0;
  store y[0 : +N] = v;
}

// CHECK:EXIT: 1
// CHECK: store_to_let.mk:6:9: error: cannot store to 'v': it is a tile value; store writes op results and inout parameters [E0509]
// CHECK:     6 |   store v[0 : +N] = v * 2.0;
// CHECK:       |         ^~~~~~~~~
