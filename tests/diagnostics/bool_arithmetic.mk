// Arithmetic on bool tiles is an error.
op count_positive<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  let v = load x[0 : +N];
  let pos = v > 0.0;
  store y[0 : +N] = pos + pos;
}

// CHECK:EXIT: 1
// CHECK: bool_arithmetic.mk:7:25: error: '+' cannot take bool[N] [E0306]
// CHECK:     7 |   store y[0 : +N] = pos + pos;
// CHECK:       |                         ^
