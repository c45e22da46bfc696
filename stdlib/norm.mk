// std.norm: RMSNorm, standalone and fused into a matvec consumer.
//
// Numerics follow Hugging Face LlamaRMSNorm:
//   h = x.float(); h = h * rsqrt(mean(h * h) + eps); out = g * h.to(bf16)
// where the last product is of two bf16 values, rounded to bf16. The product of two bf16 values is
// exact in f32, so `((g as f32) * (h as bf16 as f32)) as bf16` is that rounding, spelled out.
// Consumers recompute the norm per task (the hidden vector is tiny) instead of waiting on a
// separate norm op; the same few lines appear in every norm-fused op (std.rope, std.mlp,
// std.sampling) because op bodies cannot call helpers.

/// Standalone RMSNorm of a whole vector: `y = g * bf16(x * rsqrt(mean(x^2) + eps))`, one task.
/// Prefer the fused forms (`rmsnorm_matvec` and friends) inside a model: they avoid a sync point.
op rmsnorm<K, eps: float = 1e-5>(x: bf16[K], norm: bf16[K]) -> y: bf16[K]
    tasks t in 1 {
    let xf = (load x[0 : +K]) as f32;
    let inv = rsqrt(mean(xf * xf) + eps);
    store y[0 : +K] = (((load norm[0 : +K]) as f32) * (((xf * inv) as bf16) as f32)) as bf16;
}

/// RMSNorm fused into a matvec: `y = W * rmsnorm(x, norm)`, bf16 result, f32 accumulation.
/// Every task loads the whole hidden vector `x`, normalises it, then dot-products its R rows of
/// `w` (pre-tiled in R x C tiles, so each chunk is one contiguous block) with it, C columns at a
/// time.
/// Tuning: R (rows per task) and C (K chunk, must divide K) are the weight's `tiled(R, C)`.
op rmsnorm_matvec<N, K, R = 16, C = 512, eps: float = 1e-5>(w: bf16[N, K] tiled(R, C), norm: bf16[K], x: bf16[K])
    -> y: bf16[N]
    tasks t in N / R {
    static_assert(K % C == 0, "rmsnorm_matvec: the K chunk C must divide K");
    let xf = (load x[0 : +K]) as f32;
    let inv = rsqrt(mean(xf * xf) + eps);
    let xn = (((load norm[0 : +K]) as f32) * (((xf * inv) as bf16) as f32)) as bf16;
    var acc: f32[R];
    for k in 0 .. K by C {
        acc += rowdot(load w[t * R : +R, k : +C], xn[k : +C]);
    }
    store y[t * R : +R] = acc as bf16;
}

/// Prefill form of the norm ahead of the tensor-core projections: every row of the f32 hidden
/// state `x` normalised, `y = bf16(g * (x * rsqrt(mean(x^2) + eps)))`, bf16[T, K] (the operand
/// rounding of the prefill products: docs/language.md §10.1). Task b owns rows b*BR..: it reads
/// them once, whole (BR x K f32 in shared memory), for the sums of squares and the output.
/// Normalising once, apart from the projections, leaves each projection's K loop only its
/// products, which the backend runs on its copy pipeline. Tuning: `BR` rows per task must divide T.
op rmsnorm_rows<T, K, BR = 1, eps: float = 1e-5>(x: f32[T, K], norm: bf16[K]) -> y: bf16[T, K]
    tasks b in T / BR {
    static_assert(T % BR == 0, "rmsnorm_rows: the row block BR must divide T");
    let xr = load x[b * BR : +BR, 0 : +K];
    let inv_rms = rsqrt(row_sum(xr * xr) / K + eps);
    store y[b * BR : +BR, 0 : +K] = (repeat_rows((load norm[0 : +K]) as f32, BR) * (xr * repeat_cols(inv_rms, K))) as bf16;
}

/// The residual stream after a split-K projection (std.linear's `linear_partial_rows`), and its
/// norm: `h = residual + p[0] + ... + p[S - 1]` in f32, in that order, and `y` as `rmsnorm_rows`
/// of h. Task b owns rows b*BR..: h is summed once, whole (BR x K f32 in shared memory), for the
/// store, the sums of squares and the output. Tuning: `BR` rows per task must divide T.
op residual_rmsnorm_rows<T, K, S, BR = 1, eps: float = 1e-5>(p: f32[S, T, K], residual: f32[T, K],
    norm: bf16[K]) -> (h: f32[T, K], y: bf16[T, K])
    tasks b in T / BR {
    static_assert(T % BR == 0, "residual_rmsnorm_rows: the row block BR must divide T");
    var hr: f32[BR, K] = load residual[b * BR : +BR, 0 : +K];
    for s in 0 .. S {
        hr += load p[s, b * BR : +BR, 0 : +K];
    }
    store h[b * BR : +BR, 0 : +K] = hr;
    let inv_rms = rsqrt(row_sum(hr * hr) / K + eps);
    store y[b * BR : +BR, 0 : +K] = (repeat_rows((load norm[0 : +K]) as f32, BR) * (hr * repeat_cols(inv_rms, K))) as bf16;
}
