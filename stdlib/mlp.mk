// std.mlp: the SwiGLU feed-forward block of Llama-style models.
// The down projection with its residual add is std.linear's `matvec_residual`.

/// RMSNorm fused into the gate/up projection with the SwiGLU activation in the epilogue:
/// `y = silu(gate(n)) * up(n)`, n = rmsnorm(x, norm) with x the f32 hidden state, result bf16[F]
/// (F = N2 / 2).
/// `w` holds gate_proj and up_proj rows interleaved in R-row blocks (`interleave(R)` of the two
/// sources: rows [gate 0..R, up 0..R, gate R..2R, ...]), so task t reads its R gate rows and its
/// R up rows as one contiguous 2R-row block. Numerics: the RMSNorm, gate, up and silu in f32; the
/// product is rounded to bf16 once (the down projection's input).
/// Tuning: R (rows per task) is inferred from the weight's `interleave(R)` layout;
/// `C` (K chunk) must divide K.
op rmsnorm_swiglu<N2, K, R = 16, C = 512, eps: float = 1e-5>(w: bf16[N2, K] interleave(R), norm: bf16[K], x: f32[K])
    -> y: bf16[N2 / 2]
    tasks t in N2 / (2 * R) {
    static_assert(K % C == 0, "rmsnorm_swiglu: the K chunk C must divide K");
    let xf = (load x[0 : +K]) as f32;
    let inv_rms = rsqrt(mean(xf * xf) + eps);
    let xn = ((load norm[0 : +K]) as f32) * (xf * inv_rms);

    let row = t * 2 * R;
    var gate: f32[R];
    var up: f32[R];
    for k in 0 .. K by C {
        let xc = xn[k : +C];
        gate += rowdot((load w[row : +R, k : +C]) as f32, xc);
        up += rowdot((load w[row + R : +R, k : +C]) as f32, xc);
    }
    let act = silu(gate);
    store y[t * R : +R] = (act * up) as bf16;
}
