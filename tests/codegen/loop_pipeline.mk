// A loop's product operands copied an iteration ahead (backend/tile/pipeline.cpp), as std.attention's
// prefill has them: the queries, which the loop does not move, and the first keys and values are
// copied before it (512 threads, one 16-byte copy each an operand), one commit group; each
// iteration copies the next one's keys and values into the other buffer and commits a group (the
// last an empty one), and each product waits for all but that newest group, makes the landed
// copies visible to the warpgroup instruction and meets the block, with nothing staged in its
// statement. Nothing is in flight after the loop. (Two iterations: LLVM unrolls them.)
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --stdlib %stdlib | %FileCheck %s
op pipe<T, D, BQ = 64, BK = 64>(q: bf16[T, D], kv: bf16[T, D]) -> o: f32[T, D]
    tasks b in T / BQ {
    var acc: f32[BQ, D];
    for p0 in 0 .. T by BK {
        let s = mma_nt(load q[b * BQ : +BQ, 0 : +D], load kv[p0 : +BK, 0 : +D]);
        acc = acc + mma(s as bf16, load kv[p0 : +BK, 0 : +D]);
    }
    store o[b * BQ : +BQ, 0 : +D] = acc;
}


config small {
    toks = 128;
    dim = 64;
}

weight q: bf16[toks, dim] = "q.weight";
weight kv: bf16[toks, dim] = "kv.weight";

step decode(token: i32) -> (o: f32[toks, dim]) {
    return (pipe(q, kv));
}

// CHECK: .maxntid 512, 1, 1
// CHECK-COUNT-3: cp.async.cg.shared.global
// CHECK-NOT: cp.async.cg
// CHECK: cp.async.commit_group;
// CHECK-COUNT-2: cp.async.cg.shared.global
// CHECK-NOT: cp.async.cg
// CHECK: cp.async.commit_group;
// CHECK-NOT: st.shared.v4
// CHECK: cp.async.wait_group 1;
// CHECK: fence.proxy.async.shared::cta;
// CHECK: bar.sync 1, 512;
// CHECK: wgmma.mma_async
// CHECK: cp.async.wait_group 1;
// CHECK: wgmma.mma_async
// The second iteration: no copy, an empty group.
// CHECK-NOT: cp.async.cg
// CHECK: cp.async.commit_group;
// CHECK: cp.async.wait_group 1;
// CHECK: wgmma.mma_async
// CHECK: cp.async.wait_group 1;
// CHECK: wgmma.mma_async
// CHECK-NOT: cp.async.cg
// CHECK: cp.async.wait_group 0;
