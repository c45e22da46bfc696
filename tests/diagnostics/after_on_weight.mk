op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

weight gain: f32[8] = "model.gain";

// @after waits for tensors written during the step; a weight is never written.
fn run(x: f32[8]) -> f32[8] {
  @after(gain) let b = copy(x);
  return b;
}

// CHECK:EXIT: 1
// CHECK: after_on_weight.mk:11:10: error: '@after' waits for tensors written during the step; 'gain' is a weight, which nothing writes [E0605]
// CHECK:    11 |   @after(gain) let b = copy(x);
// CHECK:       |          ^~~~
