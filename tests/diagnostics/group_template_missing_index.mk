// Every group weight name must mention {l}; otherwise each layer loads the same tensor.
group layer[l in 0 .. 2] {
  weight norm: bf16[64] = "model.layers.{l}.norm.weight";
  weight proj: bf16[64, 64] = "model.layers.proj.weight";
}

// CHECK:EXIT: 1
// CHECK: group_template_missing_index.mk:4:31: error: weight name "model.layers.proj.weight" does not mention {l}, so every 'layer' element would load the same tensor [E0413]
// CHECK:     4 |   weight proj: bf16[64, 64] = "model.layers.proj.weight";
// CHECK:       |                               ^~~~~~~~~~~~~~~~~~~~~~~~~~
