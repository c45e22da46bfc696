op scale<N, s: float = 1.0>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N] * s;
}

// A generic argument must be compile-time; 'pos' is a runtime scalar.
fn run(x: f32[8], pos: i32) -> f32[8] {
  let y = scale(x, s = pos);
  return y;
}

// CHECK:EXIT: 1
// CHECK: call_generic_arg_not_constant.mk:9:24: error: generic parameter 's' of 'scale' must be a compile-time value; this is a runtime value [E0202]
// CHECK:     9 |   let y = scale(x, s = pos);
// CHECK:       |                        ^~~
