op chunked<N, C>(x: f32[N]) -> y: f32[N]
  tasks t in N / C
{
  store y[t * C : +C] = load x[t * C : +C];
}

// C appears in no parameter type and has no default.
fn run(x: f32[64]) -> f32[64] {
  let y = chunked(x);
  return y;
}

// CHECK:EXIT: 1
// CHECK: call_cannot_infer_generic.mk:9:11: error: cannot infer 'C' for 'chunked'; pass it by name: chunked(..., C = ...) [E0556]
// CHECK:     9 |   let y = chunked(x);
// CHECK:       |           ^~~~~~~~~~
// CHECK: call_cannot_infer_generic.mk:1:15: note: 'C' is declared here
// CHECK:     1 | op chunked<N, C>(x: f32[N]) -> y: f32[N]
// CHECK:       |               ^
