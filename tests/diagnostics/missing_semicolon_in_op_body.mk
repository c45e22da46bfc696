// A missing ';' inside an op body is reported at the token that follows.
op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  let v = load x[0 : +N]
  store y[0 : +N] = v;
}

// CHECK:EXIT: 1
// CHECK: missing_semicolon_in_op_body.mk:6:3: error: expected ';', found 'store' [E0005]
// CHECK:     6 |   store y[0 : +N] = v;
// CHECK:       |   ^~~~~
