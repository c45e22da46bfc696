// A group over an empty range of indices.
group layer[l in 4 .. 2] {
  weight norm: bf16[64] = "model.layers.{l}.norm.weight";
}

// CHECK:EXIT: 1
// CHECK: group_empty_range.mk:2:18: error: group 'layer' has an empty range 4 .. 2 [E0415]
// CHECK:     2 | group layer[l in 4 .. 2] {
// CHECK:       |                  ^~~~~~
