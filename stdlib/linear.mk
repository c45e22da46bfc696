// std.linear: matrix-vector products for batch-1 decode (y = W x, W row-tiled).

/// Plain matvec `y = W x`: bf16 weights and input, f32 accumulation, bf16 result.
/// One task per R rows of `w`, walking K in chunks of C; the weight is pre-tiled in R x C tiles,
/// so each chunk a task reads is one contiguous block (one copy into the loader ring).
/// Tuning: R (rows per task) and C (K chunk, must divide K) are the weight's `tiled(R, C)`.
op matvec<N, K, R = 16, C = 512>(w: bf16[N, K] tiled(R, C), x: bf16[K]) -> y: bf16[N]
    tasks t in N / R {
    static_assert(K % C == 0, "matvec: the K chunk C must divide K");
    var acc: f32[R];
    for k in 0 .. K by C {
        acc += rowdot(load w[t * R : +R, k : +C], load x[k : +C]);
    }
    store y[t * R : +R] = acc as bf16;
}

/// Matvec with a residual add in the epilogue: `y = residual + W x`, all in f32 (the residual
/// stream stays f32: see std.llama's numerics).
/// Used for the attention output projection and the MLP down projection.
/// Tuning: R (rows per task) and C (K chunk, must divide K) are the weight's `tiled(R, C)`.
op matvec_residual<N, K, R = 16, C = 512>(w: bf16[N, K] tiled(R, C), x: bf16[K], residual: f32[N]) -> y: f32[N]
    tasks t in N / R {
    static_assert(K % C == 0, "matvec_residual: the K chunk C must divide K");
    var acc: f32[R];
    for k in 0 .. K by C {
        acc += rowdot(load w[t * R : +R, k : +C], load x[k : +C]);
    }
    let wx = acc;
    let res = load residual[t * R : +R];
    store y[t * R : +R] = res + wx;
}

/// Prefill form of `matvec_residual` for T rows: `y = residual + x W^T` in f32, x bf16[T, K], on
/// the tensor cores where the shapes allow (docs/language.md, "Matrix products"). Task (t, b) owns
/// the BN output columns t*BN.. of the BT rows b*BT..; it walks K in chunks of KC and accumulates
/// in f32.
/// Tuning: R and C are the weight's `tiled(R, C)`; `BN` columns per task, a multiple of R; `BT`
/// rows per task must divide T; the K chunk `KC` (must divide K) bounds the tiles a task holds.
op linear_residual_rows<N, K, T, R = 16, C = 512, BN = R, BT = 16, KC = 64>(w: bf16[N, K] tiled(R, C),
    x: bf16[T, K], residual: f32[T, N]) -> y: f32[T, N]
    tasks t in N / BN, b in T / BT {
    static_assert(K % KC == 0, "linear_residual_rows: the K chunk KC must divide K");
    static_assert(T % BT == 0, "linear_residual_rows: the row block BT must divide T");
    static_assert(N % BN == 0, "linear_residual_rows: the columns per task BN must divide N");
    static_assert(BN % R == 0, "linear_residual_rows: the columns per task BN must be a multiple of the tile rows R");
    var acc: f32[BT, BN];
    for k in 0 .. K by KC {
        acc += mma_nt(load x[b * BT : +BT, k : +KC], load w[t * BN : +BN, k : +KC]);
    }
    let res = load residual[b * BT : +BT, t * BN : +BN];
    store y[b * BT : +BT, t * BN : +BN] = res + acc;
}

/// Split-K form of `linear_residual_rows`, without the residual: `S` partial products, each over
/// K / S, `p[s] = x[:, s K/S ..] W[:, s K/S ..]^T` in f32, for a consumer that adds the residual and
/// the parts as it reads them (std.norm's `residual_rmsnorm_rows`). Where
/// the outputs are few for the SMs (o and down of a 512-row prefill), S tasks of twice the columns
/// read fewer operand bytes per output than one task over all of K (bench/NOTES.md 29).
/// Task (t, b, s) owns part s of the BN output columns t*BN.. of the BT rows b*BT...
/// Tuning: as `linear_residual_rows`; S * KC must divide K.
op linear_partial_rows<N, K, T, R = 16, C = 512, S = 2, BN = R, BT = 16, KC = 64>(w: bf16[N, K] tiled(R, C),
    x: bf16[T, K]) -> p: f32[S, T, N]
    tasks t in N / BN, b in T / BT, s in S {
    static_assert(K % (S * KC) == 0, "linear_partial_rows: S parts of K chunks KC must divide K");
    static_assert(T % BT == 0, "linear_partial_rows: the row block BT must divide T");
    static_assert(N % BN == 0, "linear_partial_rows: the columns per task BN must divide N");
    static_assert(BN % R == 0, "linear_partial_rows: the columns per task BN must be a multiple of the tile rows R");
    const KS = K / S;
    var acc: f32[BT, BN];
    for k in s * KS .. s * KS + KS by KC {
        acc += mma_nt(load x[b * BT : +BT, k : +KC], load w[t * BN : +BN, k : +KC]);
    }
    store p[s, b * BT : +BT, t * BN : +BN] = acc;
}
