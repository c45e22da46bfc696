// std.linear: matvec with the residual add in its epilogue (bf16 input row, f32 residual stream
// in and out).
import std.embed;
import std.linear;

// matvec_residual's x is a bf16 row while std.embed yields the f32 residual stream, so the test
// also embeds the bf16 row with this local copy of the bf16 lookup (one task per C-column piece).
op embed_bf16<V, D, C = 64>(table: bf16[V, D], token: i32) -> y: bf16[D]
    tasks t in D / C {
    store y[t * C : +C] = load table[token, t * C : +C];
}

config small {
    vocab = 32;
    hidden = 64;
}

weight table: bf16[vocab, hidden] = "model.embed_tokens.weight";
weight w: bf16[hidden, hidden] tiled(8, 64) = "o_proj.weight";

step decode(token: i32) -> (y: f32[hidden]) {
    let x = embed_bf16(table, token, C = 64);
    let res = embed(table, token, C = 64);
    let y = matvec_residual(w, x, res);
    return (y);
}
