op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// An if in a fn needs a compile-time condition.
fn run(x: f32[8], n: i32) -> f32[8] {
  var y: f32[8] = copy(x);
  if n > 0 {
    y = copy(y);
  }
  return y;
}

// CHECK:EXIT: 1
// CHECK: fn_if_not_constant.mk:10:6: error: `if` in a fn or step needs a compile-time condition; '>' is computed at run time [E0713]
// CHECK:    10 |   if n > 0 {
// CHECK:       |      ^~~~~
