op scale<N, s: float = 1.0>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N] * s;
}

// The float generic 's' is given a bool.
fn run(x: f32[8]) -> f32[8] {
  let y = scale(x, s = true);
  return y;
}

// CHECK:EXIT: 1
// CHECK: call_generic_arg_type.mk:9:24: error: generic parameter 's' of 'scale' is a compile-time float, found compile-time bool [E0555]
// CHECK:     9 |   let y = scale(x, s = true);
// CHECK:       |                        ^~~~
