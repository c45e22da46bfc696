// `as` needs a dtype; f64 is not one.
op widen<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  let v = load x[0 : +N] as f64;
  store y[0 : +N] = v;
}

// CHECK:EXIT: 1
// CHECK: cast_to_unknown_dtype.mk:5:29: error: cannot cast to 'f64': expected a dtype (bf16, f16, f32, i32, bool) [E0310]
// CHECK:     5 |   let v = load x[0 : +N] as f64;
// CHECK:       |                             ^~~
