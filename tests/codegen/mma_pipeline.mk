// A K loop of one tensor-core product whose operands are both rows in global memory (backend/
// tile/mma.cpp, mmaAccumulatingLoop): the activations `a` and the weight rows of two R x C tiles of
// a tiled(R, C) weight (32 rows from a multiple of R: rows C apart inside a tile, groups of R
// rows R * K apart). Where the target has asynchronous copies both operands are copied S - 1
// iterations ahead into S staging buffers, one commit group an iteration; with 4 stages the wait
// before an iteration's products leaves the 2 newest groups in flight. Without them (AMDGPU) the
// staging is synchronous, 16 bytes a load.
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --stdlib %stdlib | %FileCheck %s --check-prefix=PTX
// RUN: %mkdsl build %s --emit=ptx --target sm_80 --stdlib %stdlib | %FileCheck %s --check-prefix=PTX
// RUN: %mkdsl build %s --emit=amdgcn --target gfx942 --stdlib %stdlib | %FileCheck %s --check-prefix=GCN
op to_bf16<T, K>(x: f32[T, K]) -> y: bf16[T, K]
    tasks t in 1 {
    store y[0 : +T, 0 : +K] = (load x[0 : +T, 0 : +K]) as bf16;
}

op wide_rows<T, N, K, R = 16, C = 64, BN = 32, KC = 32>(a: bf16[T, K], w: bf16[N, K] tiled(R, C)) -> y: f32[T, N]
    tasks t in N / BN {
    var acc: f32[T, BN];
    for k in 0 .. K by KC {
        acc += mma_nt(load a[0 : +T, k : +KC], load w[t * BN : +BN, k : +KC]);
    }
    store y[0 : +T, t * BN : +BN] = acc;
}

config small {
    toks = 16;
    outs = 64;
    feats = 256;
}

weight x: f32[toks, feats] = "x.weight";
weight w: bf16[outs, feats] tiled(16, 64) = "w.weight";

step decode(token: i32) -> (y: f32[toks, outs]) {
    let a = to_bf16(x);
    let y = wide_rows(a, w);
    return (y);
}

// PTX: cp.async.cg.shared.global
// PTX: cp.async.commit_group
// PTX: cp.async.wait_group 2
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// GCN-NOT: scratch
// GCN: global_load_dwordx4
// GCN: v_mfma_f32_16x16x16{{_?}}bf16
