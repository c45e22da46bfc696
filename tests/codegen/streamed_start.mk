// A K loop's operand tiles go through the copy pipeline (mma_pipeline.mk: `cp.async` iterations
// ahead) only where the backend can show that their starts keep the copies 16-byte aligned
// (ir/static_facts.cpp, used by backend/tile/plan.cpp). `(t * BN) % N` is a multiple of 64, as
// `a % c` is a multiple of what divides both a and c: its rows are copied ahead as `t * BN`'s are.
// (Where the backend could not place a start, each iteration loaded its tiles and waited: std.rope's
// prefill q/k/v, the whole step 13% slower, bench/NOTES.md 40.)
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --stdlib %stdlib | %FileCheck %s
op rows_product<N, K, T, BN = 64, KC = 64>(w: bf16[N, K] tiled(16, KC), x: f32[T, K]) -> y: f32[T, N]
    tasks t in N / BN {
    var acc: f32[T, BN];
    for k in 0 .. K by KC {
        acc += mma_nt(load x[0 : +T, k : +KC] as bf16, load w[(t * BN) % N : +BN, k : +KC]);
    }
    store y[0 : +T, t * BN : +BN] = acc;
}

config small {
    toks = 64;
    hidden = 256;
}

weight w: bf16[hidden, hidden] tiled(16, 64) = "proj.weight";

step decode(x: f32[toks, hidden]) -> (y: f32[toks, hidden]) {
    let y = rows_product(w, x);
    return (y);
}

// CHECK-LABEL: .visible .entry mk_step(
// CHECK: cp.async.cg.shared.global
// CHECK: cp.async.commit_group
// CHECK: cp.async.wait_group
