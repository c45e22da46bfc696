op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

const use_copy = true;

// return cannot be inside an if either.
fn run(x: f32[8]) -> f32[8] {
  let y = copy(x);
  if use_copy {
    return y;
  }
  return x;
}

// CHECK:EXIT: 1
// CHECK: return_inside_if.mk:13:5: error: return cannot be inside a loop or if: layer loops are unrolled into one graph [E0709]
// CHECK:    13 |     return y;
// CHECK:       |     ^~~~~~~~~
