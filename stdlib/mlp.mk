// std.mlp: the SwiGLU feed-forward block of Llama-style models.
// The down projection with its residual add is std.linear's `matvec_residual`.

/// RMSNorm fused into the gate/up projection with the SwiGLU activation in the epilogue:
/// `y = silu(gate(n)) * up(n)`, n = rmsnorm(x, norm), result bf16[F] (F = N2 / 2).
/// `w` holds gate_proj and up_proj rows interleaved in R-row blocks (`interleave(R)` of the two
/// sources: rows [gate 0..R, up 0..R, gate R..2R, ...]), so task t reads its R gate rows and its
/// R up rows as one contiguous 2R-row block. Numerics follow transformers' LlamaMLP in bf16:
/// gate and up are rounded to bf16; silu runs in f32 on the bf16 gate and is rounded to bf16; the
/// product of the two bf16 values is rounded to bf16.
/// Tuning: R (rows per task) is inferred from the weight's `interleave(R)` layout;
/// `C` (K chunk) must divide K.
op rmsnorm_swiglu<N2, K, R = 16, C = 512, eps: float = 1e-5>(w: bf16[N2, K] interleave(R), norm: bf16[K], x: bf16[K])
    -> y: bf16[N2 / 2]
    tasks t in N2 / (2 * R) {
    static_assert(K % C == 0, "rmsnorm_swiglu: the K chunk C must divide K");
    let xf = (load x[0 : +K]) as f32;
    let inv_rms = rsqrt(mean(xf * xf) + eps);
    let xn = (((load norm[0 : +K]) as f32) * (((xf * inv_rms) as bf16) as f32)) as bf16;

    let row = t * 2 * R;
    var gate: f32[R];
    var up: f32[R];
    for k in 0 .. K by C {
        let xc = xn[k : +C];
        gate += rowdot(load w[row : +R, k : +C], xc);
        up += rowdot(load w[row + R : +R, k : +C], xc);
    }
    let act = (silu((gate as bf16) as f32) as bf16) as f32;
    store y[t * R : +R] = (act * ((up as bf16) as f32)) as bf16;
}
