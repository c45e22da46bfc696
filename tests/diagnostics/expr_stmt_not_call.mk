op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// A name on its own does nothing.
fn run(x: f32[8]) -> f32[8] {
  let y = copy(x);
  y;
  return y;
}

// CHECK:EXIT: 1
// CHECK: expr_stmt_not_call.mk:10:3: error: this expression does nothing; only calls can stand alone as statements [E0566]
// CHECK:    10 |   y;
// CHECK:       |   ^
