// A generic default is a primary expression; `-1` must be parenthesised.
op shift<N, d = -1>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// CHECK:EXIT: 1
// CHECK: generic_default_not_primary.mk:2:17: error: expected a literal, a name, a call or a parenthesised expression, found '-'; write `(-1)` [E0005]
// CHECK:     2 | op shift<N, d = -1>(x: f32[N]) -> y: f32[N]
// CHECK:       |                 ^
