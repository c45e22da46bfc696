op bump<N>(c: inout f32[N]) -> y: f32[N]
  tasks t in 1
{
  let v = load c[0 : +N] + 1.0;
  store c[0 : +N] = v;
  store y[0 : +N] = v;
}

// Step inputs cannot be inout; persistent data is state.
step decode(c: inout f32[8]) -> (y: f32[8]) {
  let y = bump(c);
  return y;
}

// CHECK:EXIT: 1
// CHECK: step_input_inout.mk:10:13: error: step inputs cannot be inout; persistent data is declared as state [E0703]
// CHECK:    10 | step decode(c: inout f32[8]) -> (y: f32[8]) {
// CHECK:       |             ^~~~~~~~~~~~~~~
