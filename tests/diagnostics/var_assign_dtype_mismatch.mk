// Accumulating a bf16 tile into an f32 var.
op accumulate<N, C = 16>(x: bf16[N]) -> y: f32[C]
  tasks t in 1
{
  var acc: f32[C];
  for k in 0 .. N by C {
    acc += load x[k : +C];
  }
  store y[0 : +C] = acc;
}
