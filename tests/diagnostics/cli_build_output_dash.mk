// RUN: build --emit=graph -o -
// `-o -` is standard output, not a file named '-'.
import std.embed;
config c { vocab = 4; hidden = 64; }
weight embed_tokens: bf16[vocab, hidden] = "e";
step decode(token: i32) -> (x: f32[hidden]) {
  var x: f32[hidden] = embed(embed_tokens, token);
  return (x);
}

// CHECK:EXIT: 0
// CHECK: graph "cli_build_output_dash.mk" config c
// CHECK:
// CHECK: tensors  // 2
// CHECK:   %t0 embed_tokens: weight bf16[4, 64] row_major <- e
// CHECK:   %t1 y.0: activation f32[64] row_major
// CHECK:
// CHECK: inputs
// CHECK:   token: i32
// CHECK: outputs
// CHECK:   x = y.0
// CHECK:
// CHECK: nodes  // 1
// CHECK:   %0 = embed<C=64, D=64, V=4>(table: embed_tokens, token: input token) -> (y: y.0) tasks [1]
// CHECK:
// CHECK: // used by %0
// CHECK: func embed<C=64, D=64, V=4>(table: bf16[4, 64], token: i32[]) -> (y: f32[64]) tasks [1] as (t) {
// CHECK:   store y[t * 64 : +64] = cast<f32>(load table[token, t * 64 : +64])  // f32[64]
// CHECK: }
