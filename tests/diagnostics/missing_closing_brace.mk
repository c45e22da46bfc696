// An op body whose closing '}' is missing: the error is at the end of the file.
op copy<N>(x: f32[N]) -> y: f32[N]
  tasks t in 1
{
  let v = load x[0 : +N];
  store y[0 : +N] = v;

// CHECK:EXIT: 1
// CHECK: missing_closing_brace.mk:8:1: error: expected a statement or '}', found end of file [E0005]
// CHECK:     8 | 
// CHECK:       | ^
// CHECK: missing_closing_brace.mk:4:1: note: this '{' is not closed
// CHECK:     4 | {
// CHECK:       | ^
