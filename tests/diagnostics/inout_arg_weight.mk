op write_row<S, D>(row: bf16[D], pos: i32, cache: inout bf16[S, D]) -> at: i32
  tasks t in 1
{
  store cache[pos, 0 : +D] = load row[0 : +D];
  store at = pos;
}

weight frozen: bf16[16, 8] = "model.frozen";

// An inout parameter takes state; 'frozen' is a weight.
fn append(row: bf16[8], pos: i32) {
  write_row(row, pos, frozen);
}

// CHECK:EXIT: 1
// CHECK: inout_arg_weight.mk:12:23: error: inout parameter 'cache' of 'write_row' needs state, found weight 'frozen' [E0560]
// CHECK:    12 |   write_row(row, pos, frozen);
// CHECK:       |                       ^~~~~~
// CHECK: inout_arg_weight.mk:1:44: note: parameter 'cache' is declared here
// CHECK:     1 | op write_row<S, D>(row: bf16[D], pos: i32, cache: inout bf16[S, D]) -> at: i32
// CHECK:       |                                            ^~~~~~~~~~~~~~~~~~~~~~~
