// Helper for imported_step.mk: a module with a step.
op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

step inner(x: f32[8]) -> (y: f32[8]) {
  let y = copy(x);
  return y;
}
