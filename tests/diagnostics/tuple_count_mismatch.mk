op split<N>(x: f32[N]) -> (lo: f32[N / 2], hi: f32[N / 2])
  tasks t in 1
{
  let v = load x[0 : +N];
  store lo[0 : +N / 2] = v[0 : +N / 2];
  store hi[0 : +N / 2] = v[N / 2 : +N / 2];
}

// split gives two results; three names are bound.
fn run(x: f32[8]) -> f32[4] {
  let (a, b, c) = split(x);
  return a;
}

// CHECK:EXIT: 1
// CHECK: tuple_count_mismatch.mk:11:3: error: 'split' gives 2 results but 3 names bound [E0563]
// CHECK:    11 |   let (a, b, c) = split(x);
// CHECK:       |   ^~~~~~~~~~~~~~~~~~~~~~~~~
