// Builtins are tile-level: a fn cannot call exp.
fn run(x: f32[64]) -> f32[64] {
  let y = exp(x);
  return y;
}

// CHECK:EXIT: 1
// CHECK: call_builtin_in_fn.mk:3:11: error: the tile builtin 'exp' is not allowed in a fn or step; it belongs in an op body [E0528]
// CHECK:     3 |   let y = exp(x);
// CHECK:       |           ^~~
