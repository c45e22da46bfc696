op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// A fn without results cannot return a value.
fn run(x: f32[8]) {
  let y = copy(x);
  return y;
}

// CHECK:EXIT: 1
// CHECK: return_value_without_results.mk:10:10: error: 'run' declares no results but returns a value [E0710]
// CHECK:    10 |   return y;
// CHECK:       |          ^
