// Helper for ambiguous_imported_name.mk: one 'scale'.
op scale<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N] * 2.0;
}
