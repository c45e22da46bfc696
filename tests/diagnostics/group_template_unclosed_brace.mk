// A '{' in a weight name template without its closing '}'.
group layer[l in 0 .. 2] {
  weight norm: bf16[64] = "model.layers.{l.norm.weight";
}

// CHECK:EXIT: 1
// CHECK: group_template_unclosed_brace.mk:3:27: error: weight name template has a '{' without a matching '}' [E0412]
// CHECK:     3 |   weight norm: bf16[64] = "model.layers.{l.norm.weight";
// CHECK:       |                           ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~
