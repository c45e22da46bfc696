// An op body only sees its parameters; a weight must be passed in.
weight gain: f32[64] = "model.gain";

op scale(x: f32[64]) -> y: f32[64]
  tasks t in 1
{
  store y[0 : +64] = load x[0 : +64] * load gain[0 : +64];
}

// CHECK:EXIT: 1
// CHECK: op_uses_global_weight.mk:7:45: error: op bodies only see their parameters; pass weight 'gain' as an argument [E0514]
// CHECK:     7 |   store y[0 : +64] = load x[0 : +64] * load gain[0 : +64];
// CHECK:       |                                             ^~~~
