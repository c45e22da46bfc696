// std.linear: plain matvec, two in a row (the second waits on the first's tasks).
import std.embed;
import std.linear;

config small {
    vocab = 32;
    hidden = 64;
    mid = 128;
}

weight table: bf16[vocab, hidden] = "model.embed_tokens.weight";
weight w1: bf16[mid, hidden] tiled(16, hidden) = "up.weight";
weight w2: bf16[hidden, mid] tiled(16, mid) = "down.weight";

step decode(token: i32) -> (y: bf16[hidden]) {
    let x = embed(table, token, C = 64);
    let h = matvec(w1, x, C = 64);
    let y = matvec(w2, h, C = 64);
    return (y);
}
