// Fragment runs (backend/tile/rows.cpp): the online softmax of tests/codegen/row_runs.mk with
// key blocks of 64, so that its run starts with a product of at most 64 columns. Its elements are
// owned as mma.sync's accumulators lie: each warp computes its 16-row strip of the scores on
// mma.sync (sm_90a's warpgroup instruction is not used: its accumulators span four warps), the row
// max and row sum combine a row's four lanes (shuffles 1 and 2), P is rounded to bf16 pairs in
// registers as the a fragment of P V, and V comes through ldmatrix.trans as it lies (N-major).
// `m`, `l` and `acc` are referenced only by fragment runs (their declarations and the store are
// one-statement runs), so they live in registers across the key blocks: the loop reads no f32
// from shared memory. 64 rows are four warps' strips: the other twelve skip the run.
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --stdlib %stdlib | %FileCheck %s
op softmax_rows<T, D, BQ = 64, BK = 64>(q: bf16[T, D], kv: bf16[T, D]) -> o: f32[T, D]
    tasks b in T / BQ {
    var m: f32[BQ] = -inf;
    var l: f32[BQ];
    var acc: f32[BQ, D];
    for p0 in 0 .. T by BK {
        let s = mma_nt(load q[b * BQ : +BQ, 0 : +D], load kv[p0 : +BK, 0 : +D]) * 0.125;
        let keep = select(repeat_rows(iota(BK) + p0, BQ) <= repeat_cols(iota(BQ) + b * BQ, BK), s, -inf);
        let m_new = max(m, row_max(keep));
        let alpha = exp(m - m_new);
        let p = exp(keep - repeat_cols(m_new, BK));
        l = l * alpha + row_sum(p);
        acc = acc * repeat_cols(alpha, D) + mma(p as bf16, load kv[p0 : +BK, 0 : +D]);
        m = m_new;
    }
    store o[b * BQ : +BQ, 0 : +D] = acc / repeat_cols(l, D);
}

config small {
    toks = 128;
    dim = 64;
}

weight q: bf16[toks, dim] = "q.weight";
weight kv: bf16[toks, dim] = "kv.weight";

step attend(token: i32) -> (o: f32[toks, dim]) {
    return softmax_rows(q, kv);
}

// CHECK-LABEL: .entry mk_step(
// CHECK: .maxntid 512, 1, 1
// CHECK-NOT: wgmma
// The declarations: one run, the warps past the four strips (threads from 128) skipping it.
// CHECK: setp.gt.u32 [[SKIP:%p[0-9]+]], {{%r[0-9]+}}, 127;
// CHECK: @[[SKIP]] bra
// CHECK: bar.sync 1, 512;
// The loop's operands landed, then the same skip.
// CHECK: cp.async.wait_group 1;
// CHECK-NEXT: // end inline asm
// CHECK-NEXT: // begin inline asm
// CHECK-NEXT: bar.sync 1, 512;
// CHECK-NEXT: // end inline asm
// CHECK-NEXT: @[[SKIP]] bra
// The scores: a strip of 8 blocks a warp.
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-NOT: bar.sync
// CHECK-NOT: ld.shared.f32
// The row max within a row's four lanes.
// CHECK: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// CHECK-NEXT: mov.b32
// CHECK-NEXT: max.f32
// CHECK-NEXT: mov.b32
// CHECK-NEXT: shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
// CHECK-NOT: bar.sync
// CHECK-NOT: ld.shared.f32
// CHECK: ex2.approx.f32
// P V: P packed from registers, V transposed by ldmatrix.
// CHECK: cvt.rn.bf16.f32
// CHECK-NOT: bar.sync
// CHECK-NOT: ld.shared.f32
// CHECK: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK-NOT: bar.sync
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-NOT: ld.shared.f32
// CHECK-NOT: bar.warp.sync
// The run's one barrier, at its end.
// CHECK: bar.sync 1, 512;
