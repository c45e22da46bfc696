// The GPU check of mma and mma_nt on the matrix instruction (scripts/gpu-check.sh `mma-tc`):
// tests/gpu/mma_decode.mk's step on shapes that are multiples of every target's block (16 x 8 x 16
// on NVPTX, 16 x 16 x 16 on AMDGPU), so every product runs on tensor cores, in each of the forms
// the lowering has (backend/tile/mma.cpp):
// - `up`: an accumulating loop, `acc += mma(...)` over four k chunks of 32, f16 operands, the
//   accumulators in registers for the whole loop;
// - `mid`: the same with a bf16 activation as `a`, copied asynchronously a chunk ahead on NVPTX;
// - `down`: a plain product into a tile of its own, of 16 of the 32 columns of each of the tiled
//   weight's tiles (the rows copied 16 bytes at a time from inside the tile), and
//   `acc += mma_nt(...)` as one statement over the whole weight.
// 32 rows (two 16-row strips). Every step's logits are compared with the CPU interpreter's, within
// the bound of a different summation order (docs/language.md, "Matrix products").
import std.embed;

op append<S, D>(x: f32[D], pos: i32, cache: inout f32[S, D]) -> ()
    tasks t in 1 {
    store cache[pos, 0 : +D] = load x[0 : +D];
}

// h = cache u: [S, D] x [D, E] in f16, E / R tasks of R columns, K in chunks of KC, stored bf16.
op up<S, D, E, R = 16, KC = 32>(cache: f32[S, D], u: f16[D, E]) -> h: bf16[S, E]
    tasks t in E / R {
    var acc: f32[S, R];
    for k in 0 .. D by KC {
        acc += mma((load cache[0 : +S, k : +KC]) as f16, load u[k : +KC, t * R : +R]);
    }
    store h[0 : +S, t * R : +R] = acc as bf16;
}

// g = h m: [S, E] x [E, F] in bf16, K in chunks of 16: a is bf16 activation rows, copied
// asynchronously a chunk ahead where the target can.
op mid<S, E, F, R = 32, KC = 16>(h: bf16[S, E], m: bf16[E, F]) -> g: f32[S, F]
    tasks t in F / R {
    var acc: f32[S, R];
    for k in 0 .. E by KC {
        acc += mma(load h[0 : +S, k : +KC], load m[k : +KC, t * R : +R]);
    }
    store g[0 : +S, t * R : +R] = acc;
}

// logits[n] = sum over s of (g w^T)[s, n] and of the same over columns 16 .. 31 alone: [S, F] x
// [V, F]^T in bf16, V / R tasks, the part a product of its own, the whole accumulated into p.
op down<S, F, V, R = 32, C = 32>(g: f32[S, F], w: bf16[V, F] tiled(R, C)) -> y: f32[V]
    tasks t in V / R {
    let q = mma_nt((load g[0 : +S, 16 : +16]) as bf16, load w[t * R : +R, 16 : +16]);
    var p: f32[S, R];
    p += mma_nt((load g[0 : +S, 0 : +F]) as bf16, load w[t * R : +R, 0 : +F]);
    var acc: f32[R];
    for s in 0 .. S {
        acc += p[s, 0 : +R] + q[s, 0 : +R];
    }
    store y[t * R : +R] = acc;
}

config small {
    vocab = 64;
    dim = 128;
    inner = 48;
    feats = 64;
    seq = 32;
}

weight embed_w: bf16[vocab, dim] = "embed.weight";
weight u: f16[dim, inner] = "u.weight";
weight m: bf16[inner, feats] = "m.weight";
weight w: bf16[vocab, feats] tiled(32, 32) = "w.weight";
state cache: f32[seq, dim];

step decode(token: i32, pos: i32) -> (logits: f32[vocab]) {
    let x = embed(embed_w, token, C = 8);
    append(x, pos, cache);
    let h = up(cache, u);
    let g = mid(h, m);
    let logits = down(g, w);
    return (logits);
}
