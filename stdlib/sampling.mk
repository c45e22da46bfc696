// std.sampling: the LM head and greedy (argmax) sampling.

/// Final RMSNorm fused into the LM head, with argmax partials in the epilogue.
/// `logits = W * rmsnorm(x, norm)` as f32[V], the RMSNorm and the matvec in f32 (bf16 weights).
/// Task t also writes the max of its R logits to `part_max[t]` and the
/// index (into the vocabulary) of the first such max to `part_idx[t]`; `argmax_final` reduces them.
/// Tuning: R (rows per task) and C (K chunk, must divide K) are the weight's `tiled(R, C)`.
op rmsnorm_lm_head_argmax<V, K, R = 16, C = 512, eps: float = 1e-5>(w: bf16[V, K] tiled(R, C), norm: bf16[K], x: f32[K])
    -> (logits: f32[V], part_max: f32[V / R], part_idx: i32[V / R])
    tasks t in V / R {
    static_assert(K % C == 0, "rmsnorm_lm_head_argmax: the K chunk C must divide K");
    let xf = (load x[0 : +K]) as f32;
    let inv_rms = rsqrt(mean(xf * xf) + eps);
    let xn = ((load norm[0 : +K]) as f32) * (xf * inv_rms);
    var acc: f32[R];
    for k in 0 .. K by C {
        acc += rowdot((load w[t * R : +R, k : +C]) as f32, xn[k : +C]);
    }
    let lg = acc;
    store logits[t * R : +R] = lg;
    store part_max[t] = max(lg);
    store part_idx[t] = argmax(lg) + t * R;
}

/// Greedy sampling, final reduction: the index of the first maximum over all argmax partials
/// (`part_max[p]` with its vocabulary index `part_idx[p]`), one task. Because every partial holds
/// the first max of its own contiguous slice and slices are in vocabulary order, this is the first
/// index of the global maximum, like torch.argmax.
op argmax_final<P>(part_max: f32[P], part_idx: i32[P]) -> next: i32
    tasks t in 1 {
    let best = argmax(load part_max[0 : +P]);
    store next = load part_idx[best];
}

/// Prefill form of the head for every row: `logits[r, :] = xn[r, :] W^T` as f32, for the
/// normalised rows `xn` (bf16[T, K], std.norm's `rmsnorm_rows` with the final norm). For scoring
/// a whole prompt (every position's logits); generation needs the last row only (std.llama's
/// `llama_head_prefill`). Task (t, b) owns vocabulary rows t*R.. of rows b*BT...
/// Tuning: R and C are the weight's `tiled(R, C)`; `BT` rows per task must divide T; the K chunk
/// `KC` (must divide K) bounds the tiles a task holds.
op lm_head_logits_rows<V, K, T, R = 16, C = 512, BT = 16, KC = 64>(w: bf16[V, K] tiled(R, C), xn: bf16[T, K])
    -> logits: f32[T, V]
    tasks t in V / R, b in T / BT {
    static_assert(K % KC == 0, "lm_head_logits_rows: the K chunk KC must divide K");
    static_assert(T % BT == 0, "lm_head_logits_rows: the row block BT must divide T");
    var acc: f32[BT, R];
    for k in 0 .. K by KC {
        acc += mma_nt(load xn[b * BT : +BT, k : +KC], load w[t * R : +R, k : +KC]);
    }
    store logits[b * BT : +BT, t * R : +R] = acc;
}
