// Two parameters of one op with the same name.
op add<N>(x: f32[N], x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  store y[0 : +N] = load x[0 : +N];
}

// CHECK:EXIT: 1
// CHECK: redefinition_param.mk:2:22: error: 'x' is already defined [E0107]
// CHECK:     2 | op add<N>(x: f32[N], x: f32[N]) -> y: f32[N]
// CHECK:       |                      ^
// CHECK: redefinition_param.mk:2:11: note: previous definition is here
// CHECK:     2 | op add<N>(x: f32[N], x: f32[N]) -> y: f32[N]
// CHECK:       |           ^
