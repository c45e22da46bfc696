// The same annotation twice on one op.
@cluster(2)
@cluster(2)
op fill(x: f32[8]) -> y: f32[8]
  tasks t in 8
{
  store y[t] = load x[t];
}

// CHECK:EXIT: 1
// CHECK: duplicate_annotation.mk:3:1: error: '@cluster' is given twice [E0603]
// CHECK:     3 | @cluster(2)
// CHECK:       | ^~~~~~~~~~~
