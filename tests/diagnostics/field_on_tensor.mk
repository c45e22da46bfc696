op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// Only group elements have fields; 'x' is a tensor.
fn run(x: f32[8]) -> f32[8] {
  let y = copy(x.norm);
  return y;
}

// CHECK:EXIT: 1
// CHECK: field_on_tensor.mk:9:18: error: f32[8] has no fields [E0419]
// CHECK:     9 |   let y = copy(x.norm);
// CHECK:       |                  ^~~~
