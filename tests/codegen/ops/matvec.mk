// std.linear: plain matvec, two in a row (the second waits on the first's tasks).
import std.linear;

// std.embed yields the f32 residual stream; matvec needs a bf16 row, so the test embeds with this
// local copy of the bf16 lookup (one task per C-column piece, as std.embed).
op embed_bf16<V, D, C = 64>(table: bf16[V, D], token: i32) -> y: bf16[D]
    tasks t in D / C {
    store y[t * C : +C] = load table[token, t * C : +C];
}

config small {
    vocab = 32;
    hidden = 64;
    mid = 128;
}

weight table: bf16[vocab, hidden] = "model.embed_tokens.weight";
weight w1: bf16[mid, hidden] tiled(16, 64) = "up.weight";
weight w2: bf16[hidden, mid] tiled(16, 64) = "down.weight";

step decode(token: i32) -> (y: bf16[hidden]) {
    let x = embed_bf16(table, token, C = 64);
    let h = matvec(w1, x);
    let y = matvec(w2, h);
    return (y);
}
