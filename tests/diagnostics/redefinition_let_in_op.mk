// A let in an op body that reuses the name of an earlier let.
op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  let v = load x[0 : +N];
  let v = v * 2.0;
  store y[0 : +N] = v;
}

// CHECK:EXIT: 1
// CHECK: redefinition_let_in_op.mk:6:7: error: 'v' is already defined [E0107]
// CHECK:     6 |   let v = v * 2.0;
// CHECK:       |       ^
// CHECK: redefinition_let_in_op.mk:5:7: note: previous definition is here
// CHECK:     5 |   let v = load x[0 : +N];
// CHECK:       |       ^
