// std.embed: the embedding lookup alone (a row read indexed by a runtime scalar input; the bf16
// row is widened to the f32 residual stream).
import std.embed;

config small {
    vocab = 64;
    hidden = 128;
}

weight table: bf16[vocab, hidden] = "model.embed_tokens.weight";

step decode(token: i32) -> (x: f32[hidden]) {
    let x = embed(table, token, C = 32);
    return (x);
}
