// mma's b read N-major on sm_90a's wgmma (backend/tile/mma.cpp, nvptx/wgmma.cpp): an attention's
// `p v` with v[k, n] rows of a 3-D tensor under one index (a cache's head). Where N is a multiple
// of 64, b is staged as it lies, K rows of each 64 columns in a 128-byte-swizzled panel: its rows
// are copied 16 bytes at a time from global memory (the 3-D region as rows of a pitch), the b
// descriptor's leading offset is one panel (64 rows x 128 bytes, 512 in 16-byte units, in bits
// 16-29 beside the stride 1024 >> 4 and the 128-byte swizzle: 0x4000004002000000), a k step of
// 16 rows advances it by 2048 bytes (128), and each instruction sets the transpose flag of b.
// Four 64 x 16 tiles, one a warpgroup: three start inside a panel row. With `--mma=warp` (mma.sync)
// the same product reads b element by element.
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --stdlib %stdlib | %FileCheck %s --check-prefix=WG
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --mma=warp --stdlib %stdlib | %FileCheck %s --check-prefix=WARP
op fill<S, D>(w: bf16[2, S, D]) -> c: bf16[2, S, D]
    tasks h in 2 {
    store c[h, 0 : +S, 0 : +D] = load w[h, 0 : +S, 0 : +D];
}

op pv<M, S, D>(a: bf16[M, S], c: bf16[2, S, D], token: i32) -> y: f32[M, D]
    tasks t in 1 {
    store y[0 : +M, 0 : +D] = mma(load a[0 : +M, 0 : +S], load c[token % 2, 0 : +S, 0 : +D]);
}

config small {
    rows = 64;
    keys = 64;
    dim = 64;
}

weight a: bf16[rows, keys] = "a.weight";
weight w: bf16[2, keys, dim] = "w.weight";

step decode(token: i32) -> (y: f32[rows, dim]) {
    let c = fill(w);
    let y = pv(a, c, token);
    return (y);
}

// WG: ld.global.v4.u32
// WG: or.b64 {{%rd[0-9]+}}, {{%rd[0-9]+}}, 4611686293338849280;
// WG: wgmma.fence.sync.aligned;
// WG-NEXT: add.s64 mk_da, {{%rd[0-9]+}}, 0;
// WG-NEXT: add.s64 mk_db, {{%rd[0-9]+}}, 0;
// WG-NEXT: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {{{.*}}}, mk_da, mk_db, 1, 1, 1, 0, 1;
// WG-NEXT: add.s64 mk_da, {{%rd[0-9]+}}, 2;
// WG-NEXT: add.s64 mk_db, {{%rd[0-9]+}}, 128;
// WG-NEXT: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {{{.*}}}, mk_da, mk_db, 1, 1, 1, 0, 1;

// WARP-NOT: wgmma
// WARP: ld.global.u16
// WARP: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
