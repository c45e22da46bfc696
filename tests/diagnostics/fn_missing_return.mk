op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// A fn with results must end with return.
fn run(x: f32[8]) -> f32[8] {
  let y = copy(x);
}

// CHECK:EXIT: 1
// CHECK: fn_missing_return.mk:8:4: error: 'run' must end with `return` [E0708]
// CHECK:     8 | fn run(x: f32[8]) -> f32[8] {
// CHECK:       |    ^~~
