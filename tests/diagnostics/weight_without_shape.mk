// A weight is a tensor: it needs a shape.
weight scale: bf16 = "model.scale";

// CHECK:EXIT: 1
// CHECK: weight_without_shape.mk:2:15: error: weight 'scale' needs a shape, e.g. bf16[N] [E0303]
// CHECK:     2 | weight scale: bf16 = "model.scale";
// CHECK:       |               ^~~~
