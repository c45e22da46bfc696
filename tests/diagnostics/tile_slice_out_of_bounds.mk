// Slicing a tile past its end: the tile has 16 elements.
op halves(x: f32[16]) -> y: f32[16]
  tasks t in 1
{
  let v = load x[0 : +16];
  store y[0 : +16] = v[8 : +16];
}

// CHECK:EXIT: 1
// CHECK: tile_slice_out_of_bounds.mk:6:24: error: region [8 : +16] is out of bounds for dimension 0 of 'v' (size 16) [E0504]
// CHECK:     6 |   store y[0 : +16] = v[8 : +16];
// CHECK:       |                        ^~~~~~~
// CHECK: tile_slice_out_of_bounds.mk:5:23: note: shape [16] comes from here
// CHECK:     5 |   let v = load x[0 : +16];
// CHECK:       |                       ^~
