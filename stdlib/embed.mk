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

/// Prefill form: the embeddings of T tokens, `y[r, :] = table[tokens[r], :]` as f32 (exact), one
/// task per row and C-column piece. Every entry of `tokens` must be in [0, V), padding included.
/// Tuning: `C` (columns per task) must divide D.
op embed_rows<V, D, T, C = 64>(table: bf16[V, D], tokens: i32[T]) -> y: f32[T, D]
    tasks r in T, t in D / C {
    static_assert(D % C == 0, "embed_rows: the column chunk C must divide the hidden size D");
    let token = load tokens[r];
    store y[r, t * C : +C] = (load table[token, t * C : +C]) as f32;
}

/// Row `r` of an f32 matrix, `y = x[r, :]`, in C-column pieces: a prefill's last real row for the
/// decode head. `r` must be in [0, T).
/// Tuning: `C` (columns per task) must divide D.
op take_row<T, D, C = 64>(x: f32[T, D], r: i32) -> y: f32[D]
    tasks t in D / C {
    static_assert(D % C == 0, "take_row: the column chunk C must divide D");
    store y[t * C : +C] = load x[r, t * C : +C];
}

/// `take_row` of a bf16 matrix: a prefill's last real row of the rotated queries, for the decode
/// attention of that row alone. `r` must be in [0, T).
/// Tuning: `C` (columns per task) must divide D.
op take_row_bf16<T, D, C = 64>(x: bf16[T, D], r: i32) -> y: bf16[D]
    tasks t in D / C {
    static_assert(D % C == 0, "take_row_bf16: the column chunk C must divide D");
    store y[t * C : +C] = load x[r, t * C : +C];
}

/// The position of a chunk's row `r` when its first row is at `pos0`: `p = pos0 + r` (a prefill
/// row's position for an op of one token).
op row_position(pos0: i32, r: i32) -> p: i32
    tasks t in 1 {
    store p = pos0 + r;
}
