// sm_90a's default (`--mma=warpgroup`): a K loop of two tensor-core products of one a on 128
// rows, as std.mlp's gate and up columns, on sm_90a's wgmma (backend/tile/mma.cpp,
// nvptx/wgmma.cpp). The shared memory is 1024-byte aligned for the 128-byte-swizzled panels; the
// staged copies are fenced for the async proxy before the barrier that publishes them. The two
// 128 x 32 products are dealt as one: four 64 x 32 tiles, one a warpgroup, so one inline block an
// iteration fences the accumulators, runs the tile's four k steps and commits them, left in flight
// while the next iteration's copies are issued and waited for: the wait (a block of its own, over
// the accumulators) comes before that iteration's barrier, and after the loop before the
// accumulators are written back (LLVM unrolls the two iterations). With `--mma-chains 4` the four
// k steps go to four independent sets of accumulators (the first onto the tile's, the others from
// zero: scale-d 0), summed after a wait in the same block. With `--mma=warp` the products stay on mma.sync;
// sm_80 has no wgmma (asking for it is an error). A step of products on the matrix instruction has
// no weight ring (backend/kernel.cpp's planBlock): no loader warp, 512 threads, and the shared
// memory the ring would take stages four K chunks (three copies in flight: wait_group 2).
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --stdlib %stdlib | %FileCheck %s --check-prefix=WG
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --mma=warpgroup --stdlib %stdlib | %FileCheck %s --check-prefix=WG
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --mma-chains 4 --stdlib %stdlib | %FileCheck %s --check-prefix=CH
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --mma=warp --stdlib %stdlib | %FileCheck %s --check-prefix=WARP
// RUN: ! %mkdsl build %s --emit=ptx --target sm_80 --mma=warpgroup --stdlib %stdlib 2>&1 >/dev/null | %FileCheck %s --check-prefix=SM80
op to_bf16<T, K>(x: f32[T, K]) -> y: bf16[T, K]
    tasks t in 1 {
    store y[0 : +T, 0 : +K] = (load x[0 : +T, 0 : +K]) as bf16;
}

op gated_rows<T, N2, K, R = 16, C = 64, BN = 32, KC = 64>(a: bf16[T, K], w: bf16[N2, K] tiled(R, C)) -> y: f32[T, N2 / 2]
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
    toks = 128;
    outs = 64;
    feats = 128;
}

weight x: f32[toks, feats] = "x.weight";
weight w: bf16[2 * outs, feats] tiled(16, 64) = "w.weight";

step decode(token: i32) -> (y: f32[toks, outs]) {
    let a = to_bf16(x);
    let y = gated_rows(a, w);
    return (y);
}

// WG: .extern .shared .align 1024 .b8 mk_smem[];
// WG: .maxntid 512, 1, 1
// WG: cp.async.cg.shared.global
// WG: fence.proxy.async.shared::cta;
// WG-NEXT: // end inline asm
// WG-NEXT: // begin inline asm
// WG-NEXT: bar.sync 1, 512;
// WG: wgmma.fence.sync.aligned;
// WG-NEXT: add.s64 mk_da, %rd{{[0-9]+}}, 0;
// WG-NEXT: add.s64 mk_db, %rd{{[0-9]+}}, 0;
// WG-NEXT: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {{[{]%f[0-9]+(, %f[0-9]+)+[}]}}, mk_da, mk_db, 1, 1, 1, 0, 0;
// WG-NEXT: add.s64 mk_da, %rd{{[0-9]+}}, 2;
// WG-NEXT: add.s64 mk_db, %rd{{[0-9]+}}, 2;
// WG-COUNT-3: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {{[{]%f[0-9]+(, %f[0-9]+)+[}]}}, mk_da, mk_db, 1, 1, 1, 0, 0;
// WG-NEXT: wgmma.commit_group.sync.aligned;
// WG-NEXT: }
// WG: cp.async.commit_group;
// WG: cp.async.wait_group 2;
// WG: wgmma.wait_group.sync.aligned 0;
// WG: fence.proxy.async.shared::cta;
// WG: bar.sync 1, 512;
// WG: wgmma.fence.sync.aligned;
// WG: wgmma.commit_group.sync.aligned;
// WG-NEXT: }
// WG: wgmma.wait_group.sync.aligned 0;
// WG-NEXT: // end inline asm
// WG-NEXT: // begin inline asm
// WG-NEXT: bar.sync 1, 512;
// CH: wgmma.fence.sync.aligned;
// CH-NEXT: add.s64 mk_da, %rd{{[0-9]+}}, 0;
// CH-NEXT: add.s64 mk_db, %rd{{[0-9]+}}, 0;
// CH-NEXT: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {{[{]%f[0-9]+(, %f[0-9]+)+[}]}}, mk_da, mk_db, 1, 1, 1, 0, 0;
// CH-COUNT-3: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {{[{]%f[0-9]+(, %f[0-9]+)+[}]}}, mk_da, mk_db, 0, 1, 1, 0, 0;
// CH-NEXT: wgmma.commit_group.sync.aligned;
// CH-NEXT: wgmma.wait_group.sync.aligned 0;
// CH-NEXT: }
// CH-NEXT: // end inline asm
// CH-COUNT-48: add.rn.f32
// WG-NOT: mma.sync
// WARP: .extern .shared .align 128 .b8 mk_smem[];
// WARP-NOT: wgmma
// WARP: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// WARP-NOT: wgmma
// SM80: --mma=warpgroup needs sm_90a's wgmma, which sm_80 lacks [E0963]
