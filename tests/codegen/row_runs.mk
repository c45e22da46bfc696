// Row-owned runs (backend/tile/rows.cpp): an online softmax over blocks of scores, as
// std.attention's prefill has it, 64 query rows a task. Neither step streams a weight (the
// second has a product on the matrix instruction), so no ring: 512 compute threads, 8 lanes a row. The statements from the
// scaled scores to `l` form one run: its row max and row sum combine a group's 8 lanes by
// shuffles (4, 2, 1; a block-wide row reduction starts at 16) with no block barrier between
// them, and its statements are ordered by the warp's barrier; the product P V after it is not
// in the run (it reads every row), so a block barrier precedes it; its values are copied an
// iteration ahead (backend/tile/pipeline.cpp). `s`, `keep`, `m_new`
// and `alpha` are the run's alone and live in registers (`alpha` an [R] local read at every
// column of `acc`'s rows): the scores are written to shared memory once (as the product's
// result), not three times. (Key blocks of 128: a product of more than 64 columns starts no
// fragment run; tests/codegen/fragment_runs.mk has those.)
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --stdlib %stdlib | %FileCheck %s
op softmax_rows<T, D, BQ = 64, BK = 128>(q: bf16[T, D], kv: bf16[T, D]) -> o: f32[T, D]
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
        acc = acc * repeat_cols(alpha, D);
        m = m_new;
        acc += mma(p as bf16, load kv[p0 : +BK, 0 : +D]);
    }
    store o[b * BQ : +BQ, 0 : +D] = acc / repeat_cols(l, D);
}

// A run ends where a statement reads a local of the run at another row's element: `c` reads `m`
// across rows (repeat_rows), so `m`'s row max stays a run of its own (with `a`) and a block
// barrier orders it before `c`.
op across_rows<R = 64>(x: f32[R, R]) -> y: f32[R, R]
    tasks t in 1 {
    let a = load x[0 : +R, 0 : +R] * 2.0;
    let m = row_max(a);
    let c = repeat_rows(m, R) + a;
    store y[0 : +R, 0 : +R] = c;
}

config small {
    toks = 128;
    dim = 64;
}

weight q: bf16[toks, dim] = "q.weight";
weight kv: bf16[toks, dim] = "kv.weight";

// One op a step, so that each is checked in its own entry whatever order LLVM lays blocks in.
// (x a step input: a weight would stream through the ring of a step without a product.)
step decode(token: i32, x: f32[dim, dim]) -> (y: f32[dim, dim]) {
    return across_rows(x);
}

step attend(token: i32) -> (o: f32[toks, dim]) {
    return softmax_rows(q, kv);
}

// CHECK-LABEL: .entry mk_step(
// across_rows: `a` and its row max are a run; nothing reads `m` back before the block barrier.
// CHECK: bar.warp.sync -1;
// CHECK: shfl.sync.bfly.b32 {{.*}}, 4, 31, -1;
// CHECK: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// CHECK-NOT: ld.shared
// CHECK: bar.sync 1, 512;
// CHECK-LABEL: .entry mk_step_attend(
// CHECK: .maxntid 512, 1, 1
// softmax_rows: the scores' product, then the row max: three shuffles within the row's 8 lanes.
// CHECK: wgmma.mma_async
// CHECK: shfl.sync.bfly.b32 {{.*}}, 4, 31, -1;
// CHECK-NOT: bar.sync
// CHECK: shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
// CHECK-NOT: bar.sync
// CHECK: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// CHECK-NOT: bar.sync
// CHECK: bar.warp.sync -1;
// CHECK-NOT: bar.sync
// The row sum, in the same run.
// CHECK: shfl.sync.bfly.b32 {{.*}}, 4, 31, -1;
// CHECK-NOT: bar.sync
// CHECK: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// CHECK-NOT: bar.sync
// The run's last statement, then P V, its values already copied: their group waited for, one
// (the next iteration's) left in flight.
// CHECK: bar.sync 1, 512;
// CHECK: cp.async.wait_group 1;
// CHECK: wgmma.mma_async
