// std.norm: standalone RMSNorm of an embedded row (one task, waits on the embed tasks).
import std.embed;
import std.norm;

config small {
    vocab = 32;
    hidden = 64;
}

weight table: bf16[vocab, hidden] = "model.embed_tokens.weight";
weight gain: bf16[hidden] = "model.norm.weight";

step decode(token: i32) -> (y: bf16[hidden]) {
    let x = embed(table, token, C = 16);
    let y = rmsnorm(x, gain, eps = 1e-6);
    return (y);
}
