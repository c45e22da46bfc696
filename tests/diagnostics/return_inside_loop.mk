op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// return cannot be inside a loop: loops are unrolled.
fn run(x: f32[8]) -> f32[8] {
  var y: f32[8] = copy(x);
  for l in 0 .. 2 {
    y = copy(y);
    return y;
  }
  return y;
}

// CHECK:EXIT: 1
// CHECK: return_inside_loop.mk:12:5: error: return cannot be inside a loop or if: layer loops are unrolled into one graph [E0709]
// CHECK:    12 |     return y;
// CHECK:       |     ^~~~~~~~~
