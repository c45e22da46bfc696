op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// Two fns that call each other.
fn ping(x: f32[8]) -> f32[8] {
  let y = pong(x);
  return y;
}

fn pong(x: f32[8]) -> f32[8] {
  let y = ping(x);
  return y;
}

// CHECK:EXIT: 1
// CHECK: mutual_recursion.mk:14:11: error: recursive calls: ping -> pong -> ping; the step must unroll to a finite graph [E0717]
// CHECK:    14 |   let y = ping(x);
// CHECK:       |           ^~~~
