// A let is immutable; only vars can be assigned.
op accumulate<N, C = 16>(x: f32[N]) -> y: f32[C]
  tasks t in 1
{
  let acc = load x[0 : +C];
  for k in C .. N by C {
    acc += load x[k : +C];
  }
  store y[0 : +C] = acc;
}

// CHECK:EXIT: 1
// CHECK: assign_to_let.mk:7:5: error: cannot assign to 'acc': it is a let binding; declare it with var to change it [E0520]
// CHECK:     7 |     acc += load x[k : +C];
// CHECK:       |     ^~~
// CHECK: assign_to_let.mk:5:7: note: 'acc' is declared here
// CHECK:     5 |   let acc = load x[0 : +C];
// CHECK:       |       ^~~
