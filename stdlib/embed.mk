// std.embed: token embedding lookup.

/// Embedding lookup: `y = table[token, :]` as f32 (exact), copied in C-column pieces (one task per
/// piece): the start of the f32 residual stream.
/// `table` is bf16[V, D] row-major (one contiguous row per token); `token` must be in [0, V).
/// Tuning: `C` (columns per task) must divide D.
op embed<V, D, C = 64>(table: bf16[V, D], token: i32) -> y: f32[D]
    tasks t in D / C {
    static_assert(D % C == 0, "embed: the column chunk C must divide the hidden size D");
    store y[t * C : +C] = (load table[token, t * C : +C]) as f32;
}
