// The GPU check of mma and mma_nt on sm_90a's warpgroup instruction (scripts/gpu-check.sh
// `mma-wg`, built with `--mma=warpgroup`): tests/gpu/mma_tensor_decode.mk's step on 128 rows and
// k chunks of 64, the shapes that run on wgmma from 128-byte-swizzled operands
// (backend/tile/mma.cpp), in each of the lowering's forms:
// - `up`: an accumulating loop of three f16 products of one a, dealt as one over the warpgroups
//   (eighteen 64 x 8 tiles: five rounds, the last for two warpgroups), a converted from an f32
//   state and b staged transposed element by element;
// - `mid`: two bf16 products of one a (four 64 x 128 tiles, one a warpgroup), a the bf16
//   activation rows copied asynchronously a chunk ahead;
// - `down`: a plain product into a tile of its own and `acc += mma_nt(...)` as one statement,
//   over 40-row tasks: ten 64 x 8 tiles for four warpgroups, so some warpgroups have one fewer;
// - `side`: `mma` with b read N-major as it lies (rows of a 3-D weight under one index, as an
//   attention reads v from its cache), copied 16 bytes at a time: four 64 x 16 tiles, three of
//   them starting inside a 128-byte row of the swizzled panel.
// Every step's logits are compared with the CPU interpreter's, within the bound of a different
// summation order (docs/language.md, "Matrix products"). Without `--mma=warpgroup` the same
// program runs on mma.sync.
import std.embed;

op append<S, D>(x: f32[D], pos: i32, cache: inout f32[S, D]) -> ()
    tasks t in 1 {
    store cache[pos, 0 : +D] = load x[0 : +D];
}

// h = cache u: [S, D] x [D, E] in f16, E / (3 R) tasks of three R-column products, K in chunks
// of KC, stored bf16.
op up<S, D, E, R = 24, KC = 64>(cache: f32[S, D], u: f16[D, E]) -> h: bf16[S, E]
    tasks t in E / (3 * R) {
    var a0: f32[S, R];
    var a1: f32[S, R];
    var a2: f32[S, R];
    for k in 0 .. D by KC {
        a0 += mma((load cache[0 : +S, k : +KC]) as f16, load u[k : +KC, 3 * t * R : +R]);
        a1 += mma((load cache[0 : +S, k : +KC]) as f16, load u[k : +KC, (3 * t + 1) * R : +R]);
        a2 += mma((load cache[0 : +S, k : +KC]) as f16, load u[k : +KC, (3 * t + 2) * R : +R]);
    }
    store h[0 : +S, 3 * t * R : +R] = a0 as bf16;
    store h[0 : +S, (3 * t + 1) * R : +R] = a1 as bf16;
    store h[0 : +S, (3 * t + 2) * R : +R] = a2 as bf16;
}

// g = h m: [S, E] x [E, F] in bf16, F / (2 R) tasks of two R-column products: a is bf16
// activation rows, copied asynchronously.
op mid<S, E, F, R = 128, KC = 64>(h: bf16[S, E], m: bf16[E, F]) -> g: f32[S, F]
    tasks t in F / (2 * R) {
    var lo: f32[S, R];
    var hi: f32[S, R];
    for k in 0 .. E by KC {
        lo += mma(load h[0 : +S, k : +KC], load m[k : +KC, 2 * t * R : +R]);
        hi += mma(load h[0 : +S, k : +KC], load m[k : +KC, (2 * t + 1) * R : +R]);
    }
    store g[0 : +S, 2 * t * R : +R] = lo;
    store g[0 : +S, (2 * t + 1) * R : +R] = hi;
}

// z = cache[0 .. 64) vw[pos % H]: [64, D] x [D, 64] in bf16, b N-major.
op side<S, D, H, N>(cache: f32[S, D], vw: bf16[H, D, N], pos: i32) -> z: f32[64, N]
    tasks t in 1 {
    store z[0 : +64, 0 : +N] = mma((load cache[0 : +64, 0 : +D]) as bf16, load vw[pos % H, 0 : +D, 0 : +N]);
}

// logits[n] = sum over s of (g w^T)[s, n] over g's first F columns, and of the same over g's last
// 64 columns against w's columns 64 .. 127 alone; plus two rows of z, columns 0 .. 39 and 24 .. 63.
op down<S, G, F, V, N, R = 40, C = 64>(g: f32[S, G], z: f32[64, N], w: bf16[V, F] tiled(R, C)) -> y: f32[V]
    tasks t in V / R {
    let q = mma_nt((load g[0 : +S, G - 64 : +64]) as bf16, load w[t * R : +R, 64 : +64]);
    var p: f32[S, R];
    p += mma_nt((load g[0 : +S, 0 : +F]) as bf16, load w[t * R : +R, 0 : +F]);
    var acc: f32[R];
    for s in 0 .. S {
        acc += p[s, 0 : +R] + q[s, 0 : +R];
    }
    store y[t * R : +R] = acc + load z[t, 0 : +R] + load z[t + 2, N - R : +R];
}

config small {
    vocab = 80;
    dim = 128;
    inner = 576;
    feats = 128;
    wide = 256;
    seq = 128;
}

weight embed_w: bf16[vocab, dim] = "embed.weight";
weight u: f16[dim, inner] = "u.weight";
weight m: bf16[inner, wide] = "m.weight";
weight w: bf16[vocab, feats] tiled(40, 64) = "w.weight";
weight vw: bf16[3, dim, 64] = "vw.weight";
state cache: f32[seq, dim];

step decode(token: i32, pos: i32) -> (logits: f32[vocab]) {
    let x = embed(embed_w, token, C = 8);
    append(x, pos, cache);
    let h = up(cache, u);
    let g = mid(h, m);
    let z = side(cache, vw, pos);
    let logits = down(g, z, w);
    return (logits);
}
