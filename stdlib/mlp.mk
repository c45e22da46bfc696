// std.mlp: the SwiGLU feed-forward block of Llama-style models.
// The down projection with its residual add is std.linear's `matvec_residual`.

/// RMSNorm fused into the gate/up projection with the SwiGLU activation in the epilogue:
/// `y = silu(gate(n)) * up(n)`, n = rmsnorm(x, norm) with x the f32 hidden state, result bf16[F]
/// (F = N2 / 2).
/// `w` is gate_proj's rows then up_proj's (the two sources concatenated), pre-tiled in R x C
/// tiles: task t reads gate rows t*R.. and up rows F + t*R.., each chunk one contiguous tile.
/// Numerics: the RMSNorm, gate, up and silu in f32; the product is rounded to bf16 once (the down
/// projection's input).
/// Tuning: R (gate rows per task) and C (K chunk, must divide K) are the weight's `tiled(R, C)`.
op rmsnorm_swiglu<N2, K, R = 16, C = 512, eps: float = 1e-5>(w: bf16[N2, K] tiled(R, C), norm: bf16[K], x: f32[K])
    -> y: bf16[N2 / 2]
    tasks t in N2 / (2 * R) {
    static_assert(K % C == 0, "rmsnorm_swiglu: the K chunk C must divide K");
    static_assert(N2 % (2 * R) == 0, "rmsnorm_swiglu: R must divide the gate (and up) rows");
    const F = N2 / 2;
    let xf = (load x[0 : +K]) as f32;
    let inv_rms = rsqrt(mean(xf * xf) + eps);
    let xn = ((load norm[0 : +K]) as f32) * (xf * inv_rms);

    var gate: f32[R];
    var up: f32[R];
    for k in 0 .. K by C {
        let xc = xn[k : +C];
        gate += rowdot((load w[t * R : +R, k : +C]) as f32, xc);
        up += rowdot((load w[F + t * R : +R, k : +C]) as f32, xc);
    }
    let act = silu(gate);
    store y[t * R : +R] = (act * up) as bf16;
}

/// Prefill form of the gate/up projection with SwiGLU, for T normalised rows `xn` (bf16[T, K],
/// std.norm's `rmsnorm_rows`: the decode form `rmsnorm_swiglu` normalises inside and keeps the
/// rows f32, docs/language.md §10.1): `y = silu(xn Wgate^T) * (xn Wup^T)`, bf16[T, F]. Task (t, b)
/// owns gate and up columns t*BN.. of rows b*BT...
/// Tuning: R and C are the weight's `tiled(R, C)`; `BN` columns per task, a multiple of R; `BT`
/// rows per task must divide T; the K chunk `KC` (must divide K) bounds the tiles a task holds.
op swiglu_rows<N2, K, T, R = 16, C = 512, BN = R, BT = 16, KC = 64>(w: bf16[N2, K] tiled(R, C), xn: bf16[T, K])
    -> y: bf16[T, N2 / 2]
    tasks t in N2 / (2 * BN), b in T / BT {
    static_assert(K % KC == 0, "swiglu_rows: the K chunk KC must divide K");
    static_assert(N2 % (2 * BN) == 0, "swiglu_rows: BN must divide the gate (and up) rows");
    static_assert(BN % R == 0, "swiglu_rows: the columns per task BN must be a multiple of the tile rows R");
    static_assert(T % BT == 0, "swiglu_rows: the row block BT must divide T");
    const F = N2 / 2;
    // One K loop for both products: the rows of xn are read once for the gate and up columns.
    var gate: f32[BT, BN];
    var up: f32[BT, BN];
    for k in 0 .. K by KC {
        gate += mma_nt(load xn[b * BT : +BT, k : +KC], load w[t * BN : +BN, k : +KC]);
        up += mma_nt(load xn[b * BT : +BT, k : +KC], load w[F + t * BN : +BN, k : +KC]);
    }
    store y[b * BT : +BT, t * BN : +BN] = (silu(gate) * up) as bf16;
}
