// The GPU check of the row builtins (scripts/gpu-check.sh `rows`): a causal attention of every
// cached position against the cache, a block of queries per task, with an online softmax over
// blocks of keys, the shape a prompt chunk's attention has. It uses row_max and row_sum on a
// product's rows, repeat_rows/repeat_cols with iota for the causal mask, repeat_cols to rescale
// rows, and row_min in the head. Each step's logits are compared with the CPU interpreter's, within
// the bound of a different summation order (docs/language.md, "Rows" and "Matrix products").
import std.embed;

op append<S, D>(x: f32[D], pos: i32, cache: inout bf16[S, D]) -> ()
    tasks t in 1 {
    store cache[pos, 0 : +D] = (load x[0 : +D]) as bf16;
}

// o[q] = softmax over keys k <= min(q, pos) of (cache[q] . cache[k]) * scale, times cache[k]:
// the query rows past pos see the first pos + 1 keys, so that every row has a key.
op attend<S, D, BQ = 16, BK = 16>(cache: bf16[S, D], pos: i32) -> o: bf16[S, D]
    tasks t in S / BQ {
    let q = load cache[t * BQ : +BQ, 0 : +D];
    var m: f32[BQ] = -inf;
    var l: f32[BQ];
    var acc: f32[BQ, D];
    for j in 0 .. S by BK {
        let k = load cache[j : +BK, 0 : +D];
        let s = mma_nt(q, k) * 0.125;
        let key = repeat_rows(iota(BK) + j, BQ);
        let row = repeat_cols(iota(BQ) + t * BQ, BK);
        let keep = select(key <= row && key <= pos, s, -inf);
        let m_new = max(m, row_max(keep));
        let p = exp(keep - repeat_cols(m_new, BK));
        let alpha = exp(m - m_new);
        l = l * alpha + row_sum(p);
        acc = acc * repeat_cols(alpha, D) + mma(p as bf16, k);
        m = m_new;
    }
    store o[t * BQ : +BQ, 0 : +D] = (acc / repeat_cols(l, D)) as bf16;
}

// logits[v] = the sum, the maximum and half the minimum over positions of (w o^T)[v, s].
op head<S, D, V, R = 16>(o: bf16[S, D], w: bf16[V, D]) -> y: f32[V]
    tasks t in V / R {
    let p = mma_nt(load w[t * R : +R, 0 : +D], load o[0 : +S, 0 : +D]);
    store y[t * R : +R] = row_sum(p) + row_max(p) + row_min(p) * 0.5;
}

config small {
    vocab = 64;
    dim = 64;
    seq = 48;
}

weight embed_w: bf16[vocab, dim] = "embed.weight";
weight w: bf16[vocab, dim] = "w.weight";
state cache: bf16[seq, dim];

step decode(token: i32, pos: i32) -> (logits: f32[vocab]) {
    let x = embed(embed_w, token, C = 8);
    append(x, pos, cache);
    let o = attend(cache, pos);
    let logits = head(o, w);
    return (logits);
}
