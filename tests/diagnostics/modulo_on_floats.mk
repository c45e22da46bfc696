// `%` takes integers, not floats.
op wrap<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  let v = load x[0 : +N];
  store y[0 : +N] = v % 2.0;
}

// CHECK:EXIT: 1
// CHECK: modulo_on_floats.mk:6:23: error: '%' cannot take f32[N] [E0306]
// CHECK:     6 |   store y[0 : +N] = v % 2.0;
// CHECK:       |                       ^
