// The GPU check of mma and mma_nt on the matrix instruction (scripts/gpu-check.sh `mma-tc`):
// tests/gpu/mma_decode.mk's step on shapes that are multiples of every target's block (16 x 8 x 16
// on NVPTX, 16 x 16 x 16 on AMDGPU), so both products run on tensor cores: `up` with f16 operands,
// `down` with bf16 ones, 32 rows (two 16-row strips), outputs 16 and 32 columns wide (strips of
// two and four blocks), K = 64 and 48. Every step's logits are compared with the CPU
// interpreter's, within the bound of a different summation order (docs/language.md, "Matrix
// products").
import std.embed;

op append<S, D>(x: f32[D], pos: i32, cache: inout f32[S, D]) -> ()
    tasks t in 1 {
    store cache[pos, 0 : +D] = load x[0 : +D];
}

// h = cache u: [S, D] x [D, E] in f16, E / R tasks of R columns.
op up<S, D, E, R = 16>(cache: f32[S, D], u: f16[D, E]) -> h: f32[S, E]
    tasks t in E / R {
    store h[0 : +S, t * R : +R] = mma((load cache[0 : +S, 0 : +D]) as f16, load u[0 : +D, t * R : +R]);
}

// logits[n] = sum over s of (h w^T)[s, n]: [S, E] x [V, E]^T in bf16, V / R tasks.
op down<S, E, V, R = 32>(h: f32[S, E], w: bf16[V, E]) -> y: f32[V]
    tasks t in V / R {
    let p = mma_nt((load h[0 : +S, 0 : +E]) as bf16, load w[t * R : +R, 0 : +E]);
    var acc: f32[R];
    for s in 0 .. S {
        acc += p[s, 0 : +R];
    }
    store y[t * R : +R] = acc;
}

config small {
    vocab = 64;
    dim = 64;
    inner = 48;
    seq = 32;
}

weight embed_w: bf16[vocab, dim] = "embed.weight";
weight u: f16[dim, inner] = "u.weight";
weight w: bf16[vocab, inner] = "w.weight";
state cache: f32[seq, dim];

step decode(token: i32, pos: i32) -> (logits: f32[vocab]) {
    let x = embed(embed_w, token, C = 8);
    append(x, pos, cache);
    let h = up(cache, u);
    let logits = down(h, w);
    return (logits);
}
