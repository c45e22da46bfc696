// A K loop of two tensor-core products of one a operand (backend/tile/mma.cpp,
// mmaAccumulatingLoop), as std.mlp's gate and up columns: a is staged once an iteration, both b
// after it, one commit group and one wait an iteration for all three copies, and the k steps of
// both products together. Two loops would copy, wait for and load a twice.
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --stdlib %stdlib | %FileCheck %s --check-prefix=PTX
// RUN: %mkdsl build %s --emit=amdgcn --target gfx942 --stdlib %stdlib | %FileCheck %s --check-prefix=GCN
op to_bf16<T, K>(x: f32[T, K]) -> y: bf16[T, K]
    tasks t in 1 {
    store y[0 : +T, 0 : +K] = (load x[0 : +T, 0 : +K]) as bf16;
}

op gated_rows<T, N2, K, R = 16, C = 64, BN = 32, KC = 32>(a: bf16[T, K], w: bf16[N2, K] tiled(R, C)) -> y: f32[T, N2 / 2]
    tasks t in N2 / (2 * BN) {
    const N = N2 / 2;
    var g: f32[T, BN];
    var u: f32[T, BN];
    for k in 0 .. K by KC {
        g += mma_nt(load a[0 : +T, k : +KC], load w[t * BN : +BN, k : +KC]);
        u += mma_nt(load a[0 : +T, k : +KC], load w[N + t * BN : +BN, k : +KC]);
    }
    store y[0 : +T, t * BN : +BN] = g * u;
}

config small {
    toks = 16;
    outs = 64;
    feats = 256;
}

weight x: f32[toks, feats] = "x.weight";
weight w: bf16[2 * outs, feats] tiled(16, 64) = "w.weight";

step decode(token: i32) -> (y: f32[toks, outs]) {
    let a = to_bf16(x);
    let y = gated_rows(a, w);
    return (y);
}

// PTX: cp.async.cg.shared.global
// PTX-COUNT-1: cp.async.wait_group 2
// PTX-NOT: cp.async.wait_group
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// GCN-NOT: scratch
// GCN: v_mfma_f32_16x16x16{{_?}}bf16
