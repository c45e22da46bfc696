// A generic default is a primary expression (or a negated one); `2 * 3` must be parenthesised.
op shift<N, d = 2 * 3>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// CHECK:EXIT: 1
// CHECK: generic_default_not_primary.mk:2:19: error: expected ',' or '>', found '*' [E0005]
// CHECK:     2 | op shift<N, d = 2 * 3>(x: f32[N]) -> y: f32[N]
// CHECK:       |                   ^
