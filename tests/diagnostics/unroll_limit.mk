op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// A compile-time loop that unrolls to far too many calls.
fn run(x: f32[8]) -> f32[8] {
  var y: f32[8] = copy(x);
  for l in 0 .. 1_000_000_000 {
    y = copy(y);
  }
  return y;
}

// CHECK:EXIT: 1
// CHECK: unroll_limit.mk:10:12: error: loop unrolls to 1000000000 iterations; the limit is 65536 [E0715]
// CHECK:    10 |   for l in 0 .. 1_000_000_000 {
// CHECK:       |            ^~~~~~~~~~~~~~~~~~
