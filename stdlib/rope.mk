// std.rope: the attention input projection with RMSNorm, rotary embedding and KV-cache append
// fused into it (the "QKV epilogue").
//
// RoPE uses the Hugging Face rotate_half convention. For a head vector q of size Dh, half = Dh/2:
//   out[:half] = q[:half] * cos - q[half:] * sin
//   out[half:] = q[half:] * cos + q[:half] * sin
// with angle[i] = pos * inv_freq[i], inv_freq[i] = 1 / theta^(2i / Dh) (i in 0 .. half), computed in
// f32 like transformers' `1.0 / (base ** (arange(0, dim, 2).float() / dim))`. q and k are rounded to
// bf16 (the projection's output dtype) before the rotation; the rotation itself is done in f32 and
// rounded to bf16 once.
//
// Optional "llama3" frequency scaling (Llama 3.1 / 3.2 checkpoints, transformers'
// `_compute_llama3_parameters`): with rope_factor != 1.0, wavelengths 2*pi / inv_freq longer than
// rope_orig / rope_low are divided by rope_factor, those shorter than rope_orig / rope_high are
// kept, and those in between are smoothly interpolated. rope_factor = 1.0 (the default) disables it
// and leaves the plain formula above bit for bit.

/// Fused attention input stage for one token: RMSNorm of the f32 hidden state `x` (in f32, not
/// rounded), the Q, K and V projections from one
/// row-concatenated weight `w` = [q_proj; k_proj; v_proj] (rows (H + 2*KVH) * Dh), RoPE on q and k,
/// and the append of k and v at position `pos` into the caches (shaped [KVH, S, Dh]).
/// Returns the rotated query, bf16[H * Dh] (head-major). H is derived from the weight's rows.
/// Task (h, j) owns head h (q heads 0..H, then k heads, then v heads) and the rotation pairs
/// j*R .. j*R+R: it computes rows j*R.. and half + j*R.. of the head, so both halves of every
/// rotate_half pair are in one task. `pos` must be in [0, S).
/// Tuning: R (rows per task, must divide Dh / 2) and C (K chunk, must divide K) are the weight's
/// `tiled(R, C)`: each chunk a task reads is one contiguous R x C tile.
op qkv_rope_append<N, K, KVH, S, Dh, R = 16, C = 512, eps: float = 1e-5, theta: float = 500000.0,
    rope_factor: float = 1.0, rope_low: float = 1.0, rope_high: float = 4.0,
    rope_orig: float = 8192.0>(
    w: bf16[N, K] tiled(R, C), norm: bf16[K], x: f32[K], pos: i32,
    k_cache: inout bf16[KVH, S, Dh], v_cache: inout bf16[KVH, S, Dh])
    -> q: bf16[N - 2 * KVH * Dh]
    tasks h in N / Dh, j in Dh / 2 / R {
    static_assert(N % Dh == 0, "qkv_rope_append: weight rows must be a whole number of heads");
    static_assert(N / Dh > 2 * KVH, "qkv_rope_append: weight rows must hold q, k and v heads");
    static_assert(Dh % (2 * R) == 0, "qkv_rope_append: tile rows R must divide head_dim / 2");
    static_assert(K % C == 0, "qkv_rope_append: the K chunk C must divide K");
    const half = Dh / 2;
    const H = N / Dh - 2 * KVH;

    // RMSNorm of the whole hidden vector (recomputed by every task).
    let xf = (load x[0 : +K]) as f32;
    let inv_rms = rsqrt(mean(xf * xf) + eps);
    let xn = ((load norm[0 : +K]) as f32) * (xf * inv_rms);

    // Rows j*R.. (first half of the head) and half + j*R.. (second half).
    let row = h * Dh + j * R;
    var a: f32[R];
    var b: f32[R];
    for k in 0 .. K by C {
        let xc = xn[k : +C];
        a += rowdot((load w[row : +R, k : +C]) as f32, xc);
        b += rowdot((load w[row + half : +R, k : +C]) as f32, xc);
    }
    let qa = a as bf16;
    let qb = b as bf16;

    if h >= H + KVH {
        // v head: no rotation, straight into the cache.
        store v_cache[h - H - KVH, pos, j * R : +R] = qa;
        store v_cache[h - H - KVH, pos, half + j * R : +R] = qb;
    } else {
        // inv_freq for the pair indices i = j*R .. j*R+R.
        let i2 = ((iota(R) + j * R) * 2) as f32;
        var inv_freq: f32[R] = 1.0 / pow(theta, i2 / Dh);
        if rope_factor != 1.0 {
            let wavelen = 6.283185307179586 / inv_freq;
            let smooth = (rope_orig / wavelen - rope_low) / (rope_high - rope_low);
            let medium = (1.0 - smooth) * inv_freq / rope_factor + smooth * inv_freq;
            inv_freq = select(wavelen < rope_orig / rope_high, inv_freq,
                select(wavelen > rope_orig / rope_low, inv_freq / rope_factor, medium));
        }
        let angle = (pos as f32) * inv_freq;
        let c = cos(angle);
        let s = sin(angle);
        let af = qa as f32;
        let bf = qb as f32;
        let ra = (af * c - bf * s) as bf16;
        let rb = (bf * c + af * s) as bf16;
        if h < H {
            store q[h * Dh + j * R : +R] = ra;
            store q[h * Dh + half + j * R : +R] = rb;
        } else {
            store k_cache[h - H, pos, j * R : +R] = ra;
            store k_cache[h - H, pos, half + j * R : +R] = rb;
        }
    }
}

/// Prefill form of `qkv_rope_append` for T tokens at positions pos0 .. pos0 + T - 1: the q/k/v
/// projections of the normalised rows `xn` (bf16[T, K], std.norm's `rmsnorm_rows`), RoPE with each
/// row's own position, and the append of T rows of k and v to the caches at pos0... Returns the
/// rotated queries, bf16[T, H * Dh]. Task (t, b) owns BN rotation pairs for the rows b*BT..: with
/// BN dividing Dh / 2, pairs (t * BN) % (Dh / 2).. of head t * BN / (Dh / 2), as the decode form
/// does for one row (BN = R); with BN a multiple of Dh / 2, the BN / (Dh / 2) whole heads from
/// head t * BN / (Dh / 2) on, whose weight rows are contiguous: one product of BT x 2BN (a task
/// of two heads over 128 rows reads a fifth fewer operand bytes than one of one head over 256,
/// bench/NOTES.md 40). Every one of the T rows is written to the caches, padding rows of a
/// partial chunk included (a later step overwrites them before anything reads them), so
/// `pos0 + T` must be at most S.
/// Tuning: R (must divide Dh / 2) and C are the weight's `tiled(R, C)`; `BN` rotation pairs per
/// task, a multiple of R that divides Dh / 2 or is a multiple of it (then its heads, BN / (Dh /
/// 2), must divide the q heads and the kv heads); `BT` rows per task must divide T; the K chunk
/// `KC` (must divide K) bounds the tiles a task holds.
op qkv_rope_append_rows<N, K, KVH, S, Dh, T, R = 16, C = 512, BN = R, BT = 16, KC = 64,
    theta: float = 500000.0, rope_factor: float = 1.0, rope_low: float = 1.0, rope_high: float = 4.0,
    rope_orig: float = 8192.0>(
    w: bf16[N, K] tiled(R, C), xn: bf16[T, K], pos0: i32,
    k_cache: inout bf16[KVH, S, Dh], v_cache: inout bf16[KVH, S, Dh])
    -> q: bf16[T, N - 2 * KVH * Dh]
    tasks t in N / (2 * BN), b in T / BT {
    const half = Dh / 2;
    const H = N / Dh - 2 * KVH;
    // Heads per task (1 where a task holds pairs of one head), and tasks per head (1 where a task
    // holds whole heads).
    const HP = (BN + half - 1) / half;
    const NP = half * HP / BN;
    static_assert(N % Dh == 0, "qkv_rope_append_rows: weight rows must be a whole number of heads");
    static_assert(N / Dh > 2 * KVH, "qkv_rope_append_rows: weight rows must hold q, k and v heads");
    static_assert(half % BN == 0 || BN % half == 0, "qkv_rope_append_rows: the pairs per task BN must divide head_dim / 2 or be a multiple of it");
    static_assert(H % HP == 0 && KVH % HP == 0, "qkv_rope_append_rows: the heads per task, BN / (head_dim / 2), must divide the q heads and the kv heads");
    static_assert(BN % R == 0, "qkv_rope_append_rows: the pairs per task BN must be a multiple of the tile rows R");
    static_assert(K % KC == 0, "qkv_rope_append_rows: the K chunk KC must divide K");
    static_assert(T % BT == 0, "qkv_rope_append_rows: the row block BT must divide T");
    static_assert(T <= S, "qkv_rope_append_rows: a chunk of T rows must fit the cache");
    // The first head and pair, as multiples of HP and BN: the backend runs a K loop's copies ahead
    // only from starts it can show keep them aligned (bench/NOTES.md 40).
    let h0 = t / NP * HP;
    let p0 = t % NP * BN;
    let r0 = b * BT;

    // The products: one head or part of one, its halves' rows apart, in two products in one K
    // loop (the rows of xn read once for both), `lo` and `hi`; several whole heads, their rows
    // contiguous, in one, `acc`, where head h0 + e's rotation pairs are columns e * Dh.. (first
    // halves) and e * Dh + half.. (second halves).
    if HP == 1 {
        var lo: f32[BT, BN];
        var hi: f32[BT, BN];
        for k in 0 .. K by KC {
            lo += mma_nt(load xn[r0 : +BT, k : +KC], load w[h0 * Dh + p0 : +BN, k : +KC]);
            hi += mma_nt(load xn[r0 : +BT, k : +KC], load w[h0 * Dh + half + p0 : +BN, k : +KC]);
        }
        let qa = lo as bf16;
        let qb = hi as bf16;
        if h0 >= H + KVH {
            store v_cache[h0 - H - KVH, pos0 + r0 : +BT, p0 : +BN] = qa;
            store v_cache[h0 - H - KVH, pos0 + r0 : +BT, half + p0 : +BN] = qb;
        } else {
            let i2 = ((iota(BN) + p0) * 2) as f32;
            var inv_freq: f32[BN] = 1.0 / pow(theta, i2 / Dh);
            if rope_factor != 1.0 {
                let wavelen = 6.283185307179586 / inv_freq;
                let smooth = (rope_orig / wavelen - rope_low) / (rope_high - rope_low);
                let medium = (1.0 - smooth) * inv_freq / rope_factor + smooth * inv_freq;
                inv_freq = select(wavelen < rope_orig / rope_high, inv_freq,
                    select(wavelen > rope_orig / rope_low, inv_freq / rope_factor, medium));
            }
            // Row r's angle is (pos0 + r) * inv_freq, the product the decode form takes for pos.
            let angle = repeat_cols((iota(BT) + (pos0 + r0)) as f32, BN) * repeat_rows(inv_freq, BT);
            let c = cos(angle);
            let s = sin(angle);
            let af = qa as f32;
            let bf = qb as f32;
            let ra = (af * c - bf * s) as bf16;
            let rb = (bf * c + af * s) as bf16;
            if h0 < H {
                store q[r0 : +BT, h0 * Dh + p0 : +BN] = ra;
                store q[r0 : +BT, h0 * Dh + half + p0 : +BN] = rb;
            } else {
                store k_cache[h0 - H, pos0 + r0 : +BT, p0 : +BN] = ra;
                store k_cache[h0 - H, pos0 + r0 : +BT, half + p0 : +BN] = rb;
            }
        }
    } else {
        var acc: f32[BT, HP * Dh];
        for k in 0 .. K by KC {
            acc += mma_nt(load xn[r0 : +BT, k : +KC], load w[h0 * Dh : +HP * Dh, k : +KC]);
        }
        if h0 >= H + KVH {
            for e in 0 .. HP {
                store v_cache[h0 + e - H - KVH, pos0 + r0 : +BT, 0 : +Dh] = acc[0 : +BT, e * Dh : +Dh] as bf16;
            }
        } else {
            let i2 = (iota(half) * 2) as f32;
            var inv_freq: f32[half] = 1.0 / pow(theta, i2 / Dh);
            if rope_factor != 1.0 {
                let wavelen = 6.283185307179586 / inv_freq;
                let smooth = (rope_orig / wavelen - rope_low) / (rope_high - rope_low);
                let medium = (1.0 - smooth) * inv_freq / rope_factor + smooth * inv_freq;
                inv_freq = select(wavelen < rope_orig / rope_high, inv_freq,
                    select(wavelen > rope_orig / rope_low, inv_freq / rope_factor, medium));
            }
            let angle = repeat_cols((iota(BT) + (pos0 + r0)) as f32, half) * repeat_rows(inv_freq, BT);
            let c = cos(angle);
            let s = sin(angle);
            for e in 0 .. HP {
                let af = (acc[0 : +BT, e * Dh : +half] as bf16) as f32;
                let bf = (acc[0 : +BT, e * Dh + half : +half] as bf16) as f32;
                let ra = (af * c - bf * s) as bf16;
                let rb = (bf * c + af * s) as bf16;
                if h0 < H {
                    store q[r0 : +BT, (h0 + e) * Dh : +half] = ra;
                    store q[r0 : +BT, (h0 + e) * Dh + half : +half] = rb;
                } else {
                    store k_cache[h0 + e - H, pos0 + r0 : +BT, 0 : +half] = ra;
                    store k_cache[h0 + e - H, pos0 + r0 : +BT, half : +half] = rb;
                }
            }
        }
    }
}
