// std.norm: standalone RMSNorm of an embedded row (one task, waits on the embed tasks).
import std.norm;

// std.embed yields the f32 residual stream; rmsnorm needs a bf16 row, so the test embeds with this
// local copy of the bf16 lookup (one task per C-column piece, as std.embed).
op embed_bf16<V, D, C = 64>(table: bf16[V, D], token: i32) -> y: bf16[D]
    tasks t in D / C {
    store y[t * C : +C] = load table[token, t * C : +C];
}

config small {
    vocab = 32;
    hidden = 64;
}

weight table: bf16[vocab, hidden] = "model.embed_tokens.weight";
weight gain: bf16[hidden] = "model.norm.weight";

step decode(token: i32) -> (y: bf16[hidden]) {
    let x = embed_bf16(table, token, C = 16);
    let y = rmsnorm(x, gain, eps = 1e-6);
    return (y);
}
