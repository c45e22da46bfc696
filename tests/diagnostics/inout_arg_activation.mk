op write_row<S, D>(row: bf16[D], pos: i32, cache: inout bf16[S, D]) -> at: i32
  tasks t in 1
{
  store cache[pos, 0 : +D] = load row[0 : +D];
  store at = pos;
}

op zeros<S, D>(row: bf16[D]) -> z: bf16[S, D]
  tasks t in S
{
  store z[t, 0 : +D] = load row[0 : +D] * 0;
}

// An inout parameter takes state; 'buf' is an activation computed by an op.
fn append(row: bf16[8], pos: i32) {
  let buf = zeros(row, S = 16);
  write_row(row, pos, buf);
}

// CHECK:EXIT: 1
// CHECK: inout_arg_activation.mk:17:23: error: inout parameter 'cache' of 'write_row' needs state, found activation 'buf' [E0560]
// CHECK:    17 |   write_row(row, pos, buf);
// CHECK:       |                       ^~~
// CHECK: inout_arg_activation.mk:1:44: note: parameter 'cache' is declared here
// CHECK:     1 | op write_row<S, D>(row: bf16[D], pos: i32, cache: inout bf16[S, D]) -> at: i32
// CHECK:       |                                            ^~~~~~~~~~~~~~~~~~~~~~~
