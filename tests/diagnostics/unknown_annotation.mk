op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// '@aftr' is not an annotation.
fn run(x: f32[8]) -> f32[8] {
  let a = copy(x);
  @aftr(a) let b = copy(x);
  return b;
}

// CHECK:EXIT: 1
// CHECK: unknown_annotation.mk:10:4: error: unknown annotation '@aftr'; did you mean 'after'? [E0601]
// CHECK:    10 |   @aftr(a) let b = copy(x);
// CHECK:       |    ^~~~
