// std.norm: RMSNorm fused into a matvec (tiled weight rows streamed per task).
import std.embed;
import std.norm;

config small {
    vocab = 32;
    hidden = 64;
    out = 128;
}

weight table: bf16[vocab, hidden] = "model.embed_tokens.weight";
weight gain: bf16[hidden] = "model.norm.weight";
weight w: bf16[out, hidden] tiled(8, hidden) = "proj.weight";

step decode(token: i32) -> (y: bf16[out]) {
    let x = embed(table, token, C = 64);
    let y = rmsnorm_matvec(w, gain, x, C = 32);
    return (y);
}
