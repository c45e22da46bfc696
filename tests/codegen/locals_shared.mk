// Tile locals share shared memory where their live ranges are apart (backend/tile/locals.cpp), and
// a K loop's staging buffers take the bytes of the accumulators it holds in registers
// (backend/tile/mma.cpp).
// - `chain`: four 64 KB lets, each read only by the next: two are live at a time, so the op needs
//   128 KB, not the 256 KB that would exceed an H200 block's 227 KB (E0962).
// - `acc_rows`: a 64 KB accumulator and 64 KB of staged operands an iteration: with the buffers
//   over the accumulator there is room for three (the copies two iterations ahead, a wait for all
//   but the newest group), where above it there would be room for two (a wait for all).
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --stdlib %stdlib | %FileCheck %s
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --mma=warp --stdlib %stdlib | %FileCheck %s
op chain<T, N>(x: f32[T, N]) -> y: f32[T, N]
    tasks t in 1 {
    let a = load x[0 : +T, 0 : +N];
    let b = a * 2.0;
    let c = b + 1.0;
    let d = c * c;
    store y[0 : +T, 0 : +N] = d;
}

op acc_rows<T, N, K, KC = 128>(a: bf16[T, K], w: bf16[N, K]) -> y: f32[T, N]
    tasks t in 1 {
    var acc: f32[T, N];
    for k in 0 .. K by KC {
        acc += mma_nt(load a[0 : +T, k : +KC], load w[0 : +N, k : +KC]);
    }
    store y[0 : +T, 0 : +N] = acc;
}

config small {
    toks = 128;
    feats = 128;
    inner = 512;
}

weight x: f32[toks, feats] = "x.weight";
weight a: bf16[toks, inner] = "a.weight";
weight w: bf16[feats, inner] = "w.weight";

step decode(token: i32) -> (y: f32[toks, feats], z: f32[toks, feats]) {
    let y = chain(x);
    let z = acc_rows(a, w);
    return (y, z);
}

// CHECK: .visible .entry mk_step(
// CHECK: cp.async.wait_group 1;
// CHECK-NOT: cp.async.wait_group 0;
