group layer[l in 0 .. 2] {
  weight norm: f32[8] = "model.layers.{l}.norm";
}

// An op parameter cannot be a group element; pass its members.
op scale(w: layer, x: f32[8]) -> y: f32[8]
  tasks t in 1
{
  store y[0 : +8] = load x[0 : +8];
}

// CHECK:EXIT: 1
// CHECK: op_param_group_type.mk:6:13: error: op parameter 'w' cannot have type layer element (ops take tensors and scalars) [E0531]
// CHECK:     6 | op scale(w: layer, x: f32[8]) -> y: f32[8]
// CHECK:       |             ^~~~~
