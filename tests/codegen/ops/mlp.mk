// std.mlp + std.linear: the SwiGLU MLP (concatenated gate/up weight) and the down projection
// with its residual (x, the f32 residual stream from std.embed, feeds both).
import std.embed;
import std.mlp;
import std.linear;

config small {
    vocab = 32;
    hidden = 64;
    ffn = 128;
}

weight table: bf16[vocab, hidden] = "model.embed_tokens.weight";
weight norm: bf16[hidden] = "model.layers.0.post_attention_layernorm.weight";
weight gate_up: bf16[2 * ffn, hidden] tiled(8, 32) = [
    "model.layers.0.mlp.gate_proj.weight",
    "model.layers.0.mlp.up_proj.weight",
];
weight down: bf16[hidden, ffn] tiled(8, 64) = "model.layers.0.mlp.down_proj.weight";

step decode(token: i32) -> (y: f32[hidden]) {
    let x = embed(table, token, C = 64);
    let act = rmsnorm_swiglu(gate_up, norm, x);
    let y = matvec_residual(down, act, x);
    return (y);
}
