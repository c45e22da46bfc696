// The GPU check of mma and mma_nt (scripts/gpu-check.sh `mma`): a decode-shaped step, so that
// mkrt-run can drive it and compare every step's logits with the CPU interpreter's
// (--compare-logits). Each step embeds its token, appends it to a cache at its position, and
// computes logits[n] = sum over s of mma_nt(mma(cache, u) as bf16, w)[s, n] over the whole cache:
// both products, with bf16 operands, on shapes that are not multiples of the fragment shapes.
import std.embed;

op append<S, D>(x: f32[D], pos: i32, cache: inout f32[S, D]) -> ()
    tasks t in 1 {
    store cache[pos, 0 : +D] = load x[0 : +D];
}

// h = cache u: [S, D] x [D, E], E / R tasks of R columns.
op up<S, D, E, R = 8>(cache: f32[S, D], u: bf16[D, E]) -> h: f32[S, E]
    tasks t in E / R {
    store h[0 : +S, t * R : +R] = mma((load cache[0 : +S, 0 : +D]) as bf16, load u[0 : +D, t * R : +R]);
}

// logits[n] = sum over s of (h w^T)[s, n]: [S, E] x [V, E]^T, V / R tasks.
op down<S, E, V, R = 8>(h: f32[S, E], w: bf16[V, E]) -> y: f32[V]
    tasks t in V / R {
    let p = mma_nt((load h[0 : +S, 0 : +E]) as bf16, load w[t * R : +R, 0 : +E]);
    var acc: f32[R];
    for s in 0 .. S {
        acc += p[s, 0 : +R];
    }
    store y[t * R : +R] = acc;
}

config small {
    vocab = 40;
    dim = 24;
    inner = 48;
    seq = 12;
}

weight embed_w: bf16[vocab, dim] = "embed.weight";
weight u: bf16[dim, inner] = "u.weight";
weight w: bf16[vocab, inner] = "w.weight";
state cache: f32[seq, dim];

step decode(token: i32, pos: i32) -> (logits: f32[vocab]) {
    let x = embed(embed_w, token, C = 8);
    append(x, pos, cache);
    let h = up(cache, u);
    let logits = down(h, w);
    return (logits);
}
