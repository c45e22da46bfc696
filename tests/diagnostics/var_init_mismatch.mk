// A var declared f32[N] initialised with a bf16 tile.
op copy<N>(x: bf16[N]) -> y: f32[N]
  tasks t in 1
{
  var acc: f32[N] = load x[0 : +N];
  store y[0 : +N] = acc;
}

// CHECK:EXIT: 1
// CHECK: var_init_mismatch.mk:5:21: error: 'acc' is declared f32[N] but initialised with bf16[N] [E0313]
// CHECK:     5 |   var acc: f32[N] = load x[0 : +N];
// CHECK:       |                     ^~~~~~~~~~~~~~
