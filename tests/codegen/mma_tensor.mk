// mma and mma_nt on the matrix instruction (backend/tile/mma.cpp with the target's mmaStep:
// nvptx/mma_sync.cpp, amdgpu/mfma.cpp): bf16 and f16 operands on shapes that are multiples of
// the target's block (mma.sync m16n8k16; MFMA 16x16x16), so every product here takes it. The
// operands are staged in shared memory at 16 bits (ldmatrix / 64-bit ds_read fragment loads)
// and the accumulators stay in registers: no f32 fma of the scalar lowering is left (mma.mk has
// that one, on shapes that do not fit). The forms: plain products (up, down, side) and an
// accumulating loop (acc_loop). tests/codegen/mma_tensor_ptxas.mk assembles these kernels.
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --stdlib %stdlib | %FileCheck %s --check-prefix=PTX
// RUN: %mkdsl build %s --emit=ptx --target sm_80 --stdlib %stdlib | %FileCheck %s --check-prefix=PTX
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --stdlib %stdlib | %S/ptx_in_loop.sh 'mma\.sync\.aligned\.m16n8k16'
// RUN: %mkdsl build %s --emit=amdgcn --target gfx942 --stdlib %stdlib | %FileCheck %s --check-prefix=GCN
// RUN: %mkdsl build %s --emit=amdgcn --target gfx90a --stdlib %stdlib | %FileCheck %s --check-prefix=GCN
// RUN: %mkdsl build %s --emit=amdgcn --target gfx942 --stdlib %stdlib | %S/ptx_in_loop.sh 'v_mfma_f32_16x16x16'
// h = x v: bf16 weights, E / R tasks of R = 16 columns (two 8-column blocks a strip on NVPTX).
op up<T, D, E, R = 16>(x: bf16[T, D], v: bf16[D, E]) -> h: f32[T, E]
    tasks t in E / R {
    store h[0 : +T, t * R : +R] = mma(load x[0 : +T, 0 : +D], load v[0 : +D, t * R : +R]);
}

// y = h w^T: the activation rounded to bf16 times an [out, in] weight, 32 columns a task.
op down<T, E, N, R = 32>(h: f32[T, E], w: bf16[N, E]) -> y: f32[T, N]
    tasks t in N / R {
    store y[0 : +T, t * R : +R] = mma_nt((load h[0 : +T, 0 : +E]) as bf16, load w[t * R : +R, 0 : +E]);
}

// z = y u^T in f16, 48 columns a task.
op side<T, N, F, R = 48>(y: f32[T, N], u: f16[F, N]) -> z: f32[T, F]
    tasks t in F / R {
    store z[0 : +T, t * R : +R] = mma_nt((load y[0 : +T, 0 : +N]) as f16, load u[t * R : +R, 0 : +N]);
}

// q = z r^T over K in chunks of 32: the accumulating loop, the accumulators in registers for the
// whole loop, r streamed through the ring and copied from its slot (tiled, one tile a chunk).
op acc_loop<T, F, G, R = 32, C = 32>(z: f32[T, F], r: bf16[G, F] tiled(R, C)) -> q: f32[T, G]
    tasks t in G / R {
    var acc: f32[T, R];
    for k in 0 .. F by C {
        acc += mma_nt((load z[0 : +T, k : +C]) as bf16, load r[t * R : +R, k : +C]);
    }
    store q[0 : +T, t * R : +R] = acc;
}

config small {
    toks = 32;
    dim = 64;
    inner = 96;
    outs = 64;
    feats = 96;
}

weight x: bf16[toks, dim] = "x.weight";
weight v: bf16[dim, inner] = "v.weight";
weight w: bf16[outs, inner] = "w.weight";
weight u: f16[feats, outs] = "u.weight";
weight r: bf16[64, feats] tiled(32, 32) = "r.weight";

step decode(token: i32) -> (q: f32[toks, 64]) {
    let h = up(x, v);
    let y = down(h, w);
    let z = side(y, u);
    let q = acc_loop(z, r);
    return (q);
}

// PTX-NOT: fma.rn.f32
// PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-NOT: fma.rn.f32
// GCN-NOT: v_fma_f32
// GCN: ds_read{{2?}}_b64
// GCN: v_mfma_f32_16x16x16{{_?}}bf16
// GCN: v_mfma_f32_16x16x16{{_?}}f16
// GCN: .private_segment_fixed_size: 0
// GCN: .vgpr_spill_count: 0
