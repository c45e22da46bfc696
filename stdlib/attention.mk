// std.attention: grouped-query attention for one decode token over a KV cache.
//
// The cache holds k and v per KV head: [KVH, S, Dh]; positions 0 .. pos are valid (pos included;
// the QKV epilogue, std.rope's qkv_rope_append, has just written position pos). Query head
// h = g * G + i (G = H / KVH) attends with KV head g, as in transformers' repeat_kv.
// Scores are q.k / sqrt(Dh) in f32 (bf16 operands, f32 accumulation); the softmax is an online
// softmax in f32 over chunks of C positions; the output is rounded to bf16 once at the end.
// Positions past pos inside the last chunk are masked with select (the cache past pos holds zeros
// or values of an earlier sequence, never trusted).

/// GQA decode attention, one pass: `o[h] = softmax(q[h] . K[g]^T / sqrt(Dh)) V[g]` over positions
/// 0 .. pos. Tasks (g, i): KV head g and query head i of its group, so the G tasks of a group
/// read the same cache rows (served from L2) and each waits only on the QKV tasks of its heads.
/// Cost grows with pos on a fixed KVH * G tasks; for long contexts prefer the split form
/// `attention_partial` + `attention_combine`.
/// Tuning: `C` (positions per chunk) must divide S.
op attention_decode<QD, KVH, S, Dh, C = 64>(q: bf16[QD], k_cache: bf16[KVH, S, Dh], v_cache: bf16[KVH, S, Dh], pos: i32)
    -> o: bf16[QD]
    tasks g in KVH, i in QD / Dh / KVH {
    static_assert(QD % (Dh * KVH) == 0, "attention_decode: query heads must be a multiple of KV heads");
    static_assert(S % C == 0, "attention_decode: the position chunk C must divide the cache length S");
    const G = QD / Dh / KVH;
    let h = g * G + i;
    let qh = load q[h * Dh : +Dh];
    let scale = rsqrt(Dh as f32);
    var m: f32 = -inf;
    var l: f32 = 0.0;
    var acc: f32[Dh];
    for p0 in 0 .. pos + 1 by C {
        let s = rowdot(load k_cache[g, p0 : +C, 0 : +Dh], qh) * scale;
        let sm = select(iota(C) + p0 <= pos, s, -inf);
        let m_new = max(m, max(sm));
        let alpha = exp(m - m_new);
        let p = exp(sm - m_new);
        l = l * alpha + sum(p);
        acc = acc * alpha + coldot((load v_cache[g, p0 : +C, 0 : +Dh]) as f32, p);
        m = m_new;
    }
    store o[h * Dh : +Dh] = (acc / l) as bf16;
}

/// Split-K GQA decode attention, first half: the positions 0 .. pos are cut into NS equal
/// C-aligned ranges (the range length follows pos, so every split has work once pos is large);
/// task (g, i, s) runs the online softmax of query head h = g * G + i over range s and writes
/// its running max `pm[s, h]`, denominator `pl[s, h]` and unnormalised output
/// `pacc[s, h * Dh : +Dh]` (f32). An empty range writes m = -inf, l = 0, acc = 0.
/// Combine with `attention_combine`.
/// Tuning: `NS` splits per head; `C` (positions per chunk) must divide S.
op attention_partial<QD, KVH, S, Dh, NS = 4, C = 64>(q: bf16[QD], k_cache: bf16[KVH, S, Dh], v_cache: bf16[KVH, S, Dh], pos: i32)
    -> (pm: f32[NS, QD / Dh], pl: f32[NS, QD / Dh], pacc: f32[NS, QD])
    tasks g in KVH, i in QD / Dh / KVH, s in NS {
    static_assert(QD % (Dh * KVH) == 0, "attention_partial: query heads must be a multiple of KV heads");
    static_assert(S % C == 0, "attention_partial: the position chunk C must divide the cache length S");
    const G = QD / Dh / KVH;
    let h = g * G + i;
    let qh = load q[h * Dh : +Dh];
    let scale = rsqrt(Dh as f32);
    // ceil((pos + 1) / (NS * C)) chunks of C positions per split.
    let per = (pos / (NS * C) + 1) * C;
    let lo = s * per;
    let hi = min(lo + per, pos + 1);
    var m: f32 = -inf;
    var l: f32 = 0.0;
    var acc: f32[Dh];
    for p0 in lo .. hi by C {
        let s_qk = rowdot(load k_cache[g, p0 : +C, 0 : +Dh], qh) * scale;
        let sm = select(iota(C) + p0 < hi, s_qk, -inf);
        let m_new = max(m, max(sm));
        let alpha = exp(m - m_new);
        let p = exp(sm - m_new);
        l = l * alpha + sum(p);
        acc = acc * alpha + coldot((load v_cache[g, p0 : +C, 0 : +Dh]) as f32, p);
        m = m_new;
    }
    store pm[s, h] = m;
    store pl[s, h] = l;
    store pacc[s, h * Dh : +Dh] = acc;
}

/// Split-K GQA decode attention, second half: merges the NS partial softmaxes of each of the H
/// query heads (`o[h] = sum_s e^(m_s - M) acc_s / sum_s e^(m_s - M) l_s`, M the max of the m_s)
/// and rounds to bf16. One task per query head; split 0 always holds position 0, so M is finite.
/// The head size is QD / H.
op attention_combine<NS, H, QD>(pm: f32[NS, H], pl: f32[NS, H], pacc: f32[NS, QD]) -> o: bf16[QD]
    tasks h in H {
    static_assert(QD % H == 0, "attention_combine: the output must be H heads of equal size");
    const Dh = QD / H;
    let m = load pm[0 : +NS, h];
    let w = exp(m - max(m));
    let l = sum((load pl[0 : +NS, h]) * w);
    let acc = coldot(load pacc[0 : +NS, h * Dh : +Dh], w);
    store o[h * Dh : +Dh] = (acc / l) as bf16;
}

/// Causal GQA attention for a chunk of T queries at positions pos0 .. pos0 + T - 1 (prefill):
/// row r attends to cache positions 0 .. pos0 + r, which hold the earlier chunks and this chunk's
/// keys and values (std.rope's `qkv_rope_append_rows` has just written them). Task (g, i, b) runs
/// query head h = g * G + i for the BQ rows b*BQ.. over key blocks of BK positions, up to the
/// block's last row: scores Q K^T on the tensor cores, an online softmax per row in f32, and
/// P V with P rounded to bf16 (the tensor-core operand; the decode form keeps P f32).
/// `pos0 + T` must be at most S. Tuning: `BQ` must divide T, `BK` must divide S.
op attention_prefill<T, QD, KVH, S, Dh, BQ = 16, BK = 64>(q: bf16[T, QD], k_cache: bf16[KVH, S, Dh],
    v_cache: bf16[KVH, S, Dh], pos0: i32) -> o: bf16[T, QD]
    tasks g in KVH, i in QD / Dh / KVH, b in T / BQ {
    static_assert(QD % (Dh * KVH) == 0, "attention_prefill: query heads must be a multiple of KV heads");
    static_assert(T % BQ == 0, "attention_prefill: the query block BQ must divide T");
    static_assert(S % BK == 0, "attention_prefill: the key block BK must divide the cache length S");
    const G = QD / Dh / KVH;
    let h = g * G + i;
    let first = pos0 + b * BQ;
    let scale = rsqrt(Dh as f32);
    var m: f32[BQ] = -inf;
    var l: f32[BQ];
    var acc: f32[BQ, Dh];
    // Key block 0 holds position 0, which every row sees: m is finite after the first block.
    // The queries are loaded in the product (again each block, from L2): so they are copied 16
    // bytes at a time into its operand, where a `let` outside the loop would keep them as f32
    // in shared memory and convert them element by element each block.
    for p0 in 0 .. first + BQ by BK {
        let s = mma_nt(load q[b * BQ : +BQ, h * Dh : +Dh], load k_cache[g, p0 : +BK, 0 : +Dh]) * scale;
        let keep = select(repeat_rows(iota(BK) + p0, BQ) <= repeat_cols(iota(BQ) + first, BK), s, -inf);
        let m_new = max(m, row_max(keep));
        let alpha = exp(m - m_new);
        let p = exp(keep - repeat_cols(m_new, BK));
        l = l * alpha + row_sum(p);
        acc = acc * repeat_cols(alpha, Dh) + mma(p as bf16, load v_cache[g, p0 : +BK, 0 : +Dh]);
        m = m_new;
    }
    store o[b * BQ : +BQ, h * Dh : +Dh] = (acc / repeat_cols(l, Dh)) as bf16;
}
