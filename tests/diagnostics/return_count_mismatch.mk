op split<N>(x: f32[N]) -> (lo: f32[N / 2], hi: f32[N / 2])
  tasks t in 1
{
  let v = load x[0 : +N];
  store lo[0 : +N / 2] = v[0 : +N / 2];
  store hi[0 : +N / 2] = v[N / 2 : +N / 2];
}

// The fn declares two results but returns one value.
fn halves(x: f32[8]) -> (a: f32[4], b: f32[4]) {
  let (lo, hi) = split(x);
  return lo;
}

// CHECK:EXIT: 1
// CHECK: return_count_mismatch.mk:12:10: error: 'halves' returns 1 value but declares 2 results [E0706]
// CHECK:    12 |   return lo;
// CHECK:       |          ^~
