// A task extent uses a name that is not a generic parameter.
op fill<N>(x: f32[N]) -> y: f32[N]
  tasks t in M
{
  store y[t] = load x[t];
}

// CHECK:EXIT: 1
// CHECK: op_extent_unknown_generic.mk:3:14: error: unknown name 'M'; did you mean 'N'? [E0108]
// CHECK:     3 |   tasks t in M
// CHECK:       |              ^
