// Generic parameters are int, float or bool.
op scale<N, s: f32>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N] * s;
}

// CHECK:EXIT: 1
// CHECK: generic_param_bad_type.mk:2:16: error: generic parameter 's' has type 'f32'; expected int, float or bool [E0530]
// CHECK:     2 | op scale<N, s: f32>(x: f32[N]) -> y: f32[N]
// CHECK:       |                ^~~
