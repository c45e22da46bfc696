// coldot with more rows than a batch (docs/backend.md): a [600, 64] bf16 matrix gives 8 column
// pieces a row and 64 row groups of the 512 threads, so 10 rows a thread. Up to 8 rows go in one
// batch with all their loads issued first; more rows loop over batches of 8 (here 2, the second
// mostly past row 599 and weighed 0), so the registers stay bounded: the 8 loads of a batch sit
// inside a loop, ahead of the batch's products.
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --stdlib %stdlib | %S/ptx_in_loop.sh 'ld\.global\.v4\.u32'
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --stdlib %stdlib | %FileCheck %s
op colsum<N, D>(a: bf16[N, D], x: bf16[N]) -> y: f32[D]
    tasks t in 1 {
    let p = (load x[0 : +N]) as f32;
    store y[0 : +D] = coldot((load a[0 : +N, 0 : +D]) as f32, p);
}

config small {
    rows = 600;
    cols = 64;
}

weight a: bf16[rows, cols] = "a.weight";
weight x: bf16[rows] = "x.weight";

step decode(token: i32) -> (y: f32[cols]) {
    let y = colsum(a, x);
    return (y);
}

// One batch: eight 16-byte loads, then the products.
// CHECK-COUNT-8: ld.global.v4.u32
// CHECK-NOT: ld.global.v4.u32
// CHECK: fma.rn.f32
