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
