// std.linear: matvec with the residual add in its epilogue.
import std.embed;
import std.linear;

config small {
    vocab = 32;
    hidden = 64;
}

weight table: bf16[vocab, hidden] = "model.embed_tokens.weight";
weight w: bf16[hidden, hidden] tiled(8, hidden) = "o_proj.weight";

step decode(token: i32) -> (y: bf16[hidden]) {
    let x = embed(table, token, C = 64);
    let y = matvec_residual(w, x, x, C = 64);
    return (y);
}
