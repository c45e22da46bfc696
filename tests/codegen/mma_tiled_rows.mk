// An mma operand read from inside one tile of a tiled(R, C) weight (backend/tile/mma.cpp,
// mmaRows): 16 rows from a multiple of R and 32 of the tile's 64 columns, not the whole tile (so
// not streamed through the ring) and not an affine layout. Inside a tile the rows are C apart, so
// the staging copies them 16 bytes at a time (one ld.global.v4 / global_load_dwordx4 a piece)
// instead of element by element, as the prefill's projections read their weights.
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --stdlib %stdlib | %FileCheck %s --check-prefix=PTX
// RUN: %mkdsl build %s --emit=ptx --target sm_80 --stdlib %stdlib | %FileCheck %s --check-prefix=PTX
// RUN: %mkdsl build %s --emit=amdgcn --target gfx942 --stdlib %stdlib | %FileCheck %s --check-prefix=GCN
op half_cols<T, N, K, R = 16, C = 64>(x: f32[T, K], w: bf16[N, K] tiled(R, C)) -> y: f32[T, N]
    tasks t in N / R {
    store y[0 : +T, t * R : +R] = mma_nt((load x[0 : +T, 32 : +32]) as bf16, load w[t * R : +R, 32 : +32]);
}

config small {
    toks = 16;
    outs = 32;
    feats = 128;
}

weight x: f32[toks, feats] = "x.weight";
weight w: bf16[outs, feats] tiled(16, 64) = "w.weight";

step decode(token: i32) -> (y: f32[toks, outs]) {
    let y = half_cols(x, w);
    return (y);
}

// PTX: ld.global.v4.u32
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// GCN: global_load_dwordx4
// GCN: v_mfma_f32_16x16x16{{_?}}bf16
