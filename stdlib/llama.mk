// std.llama: composition of the Llama decoder (transformers' LlamaForCausalLM) for one decode token.
// Generic over every shape: the model file passes its per-layer weights and caches as tensors
// (a group type is only visible in the root file, so it cannot be a parameter here).
//
// Weights, as this module expects them (names are the model file's choice):
//   attn_norm, mlp_norm: bf16[D]                     input_layernorm, post_attention_layernorm
//   w_qkv:     bf16[(H + 2*KVH) * Dh, D] tiled(RQ, CQ)  [q_proj; k_proj; v_proj] concatenated rows
//   w_o:       bf16[D, H * Dh] tiled(RO, CO)            o_proj
//   w_gate_up: bf16[2 * F, D] tiled(RF, CF)             [gate_proj; up_proj] concatenated rows
//   w_down:    bf16[D, F] tiled(RD, CD)                 down_proj
//   k_cache, v_cache: state bf16[KVH, S, Dh]
//
// Numerics: weights and the KV cache are bf16; the hidden state between layers (the residual
// stream), the RMSNorm outputs and the projections' results are f32, rounded nowhere: in
// batch-1 decode these vectors are a few KB against gigabytes of weights, so f32 costs no
// bandwidth, and it keeps the model closer to transformers' float32 run than transformers' own
// bf16 path is (which rounds every activation). What is stored as bf16 is rounded once: q, k and
// v (and the cache), the attention output, and the MLP activation silu(gate) * up.
import std.embed;
import std.rope;
import std.attention;
import std.linear;
import std.mlp;
import std.norm;
import std.sampling;

/// One Llama decoder layer for the token at position `pos`; returns the new hidden state.
///   q = rope(norm(x) Wq); k, v = rope(norm(x) Wk), norm(x) Wv -> caches at pos   (qkv_rope_append)
///   a = GQA attention over cache positions 0 .. pos, split-K in NS parts       (attention_partial/_combine)
///   h = x + a Wo^T                                                              (matvec_residual)
///   y = h + (silu(norm(h) Wgate) * norm(h) Wup) Wdown^T                         (rmsnorm_swiglu, matvec_residual)
/// Tuning, per projection (q/k/v, attention output, gate/up, down), from the weights' `tiled(R, C)`
/// layouts: `RQ`, `RO`, `RF`, `RD` rows per task (`RQ` must divide Dh / 2) and `CQ`, `CO`, `CF`,
/// `CD` K chunks (each must divide its projection's K: D, H * Dh, D, F). A task streams R x C
/// weight tiles, each one contiguous copy, through the loader ring, whose slots fit the largest
/// tile: keeping R x C equal across the projections keeps the ring's slots full. `NS` attention splits, `AC` positions per
/// attention chunk (must divide S). Model constants: `eps` (rms_norm_eps), `theta` (rope_theta)
/// and the optional llama3 RoPE scaling (`rope_factor` = 1.0 disables it).
fn llama_block<D, QD, KVH, S, Dh, F,
    RQ = 16, RO = 16, RF = 16, RD = 16, CQ = 512, CO = 512, CF = 512, CD = 512,
    NS = 4, AC = 64, eps: float = 1e-5, theta: float = 500000.0,
    rope_factor: float = 1.0, rope_low: float = 1.0, rope_high: float = 4.0,
    rope_orig: float = 8192.0>(
    x: f32[D], pos: i32,
    attn_norm: bf16[D],
    w_qkv: bf16[QD + 2 * KVH * Dh, D] tiled(RQ, CQ),
    k_cache: inout bf16[KVH, S, Dh],
    v_cache: inout bf16[KVH, S, Dh],
    w_o: bf16[D, QD] tiled(RO, CO),
    mlp_norm: bf16[D],
    w_gate_up: bf16[2 * F, D] tiled(RF, CF),
    w_down: bf16[D, F] tiled(RD, CD)) -> f32[D] {
    let q = qkv_rope_append(w_qkv, attn_norm, x, pos, k_cache, v_cache, eps = eps,
        theta = theta, rope_factor = rope_factor, rope_low = rope_low,
        rope_high = rope_high, rope_orig = rope_orig);
    let y = llama_block_after_qkv(x, q, pos, k_cache, v_cache, w_o, mlp_norm, w_gate_up, w_down,
        NS = NS, AC = AC, eps = eps);
    return y;
}

/// `llama_block` from its rotated query on: the attention of q (position `pos`, whose k and v are
/// in the caches already) and the MLP, for the token whose hidden state is x. The decode layer's
/// second part, and a prefill's last layer for the one row the head reads
/// (`llama_block_prefill_last`). Tuning as `llama_block`'s.
fn llama_block_after_qkv<D, QD, KVH, S, Dh, F,
    RO = 16, RF = 16, RD = 16, CO = 512, CF = 512, CD = 512, NS = 4, AC = 64, eps: float = 1e-5>(
    x: f32[D], q: bf16[QD], pos: i32,
    k_cache: bf16[KVH, S, Dh],
    v_cache: bf16[KVH, S, Dh],
    w_o: bf16[D, QD] tiled(RO, CO),
    mlp_norm: bf16[D],
    w_gate_up: bf16[2 * F, D] tiled(RF, CF),
    w_down: bf16[D, F] tiled(RD, CD)) -> f32[D] {
    let (pm, pl, pacc) = attention_partial(q, k_cache, v_cache, pos, NS = NS, C = AC);
    let a = attention_combine(pm, pl, pacc);
    let h = matvec_residual(w_o, a, x);
    let act = rmsnorm_swiglu(w_gate_up, mlp_norm, h, eps = eps);
    let y = matvec_residual(w_down, act, h);
    return y;
}

/// The model head: final RMSNorm fused into the LM head matvec, f32 logits (bf16-rounded values,
/// like transformers), and the greedy next token (first index of the max logit).
/// Tuning: `R` rows per task and `C` K chunk (must divide D), from the LM head's `tiled(R, C)`.
fn llama_head<V, D, R = 16, C = 512, eps: float = 1e-5>(x: f32[D], norm: bf16[D], w: bf16[V, D] tiled(R, C))
    -> (logits: f32[V], next: i32) {
    let (lg, part_max, part_idx) = rmsnorm_lm_head_argmax(w, norm, x, eps = eps);
    let nx = argmax_final(part_max, part_idx);
    return (lg, nx);
}

/// Prefill form of `llama_block`: one decoder layer for a chunk of T tokens at positions pos0 ..
/// pos0 + T - 1 (x f32[T, D], the residual stream of every row; xn, x normalised by this layer's
/// input norm), appending their k and v to the caches. Returns the layer's output y and yn, y
/// normalised by `next_norm` (the next layer's input norm): each norm runs in the op that sums the
/// residual stream (std.norm's `residual_rmsnorm_rows`), the first layer's xn in `rmsnorm_rows`.
/// The same weights, layouts and tuning as `llama_block` (`NS` and `AC` are decode-only); `BT`
/// rows per task (`BTQ` for q/k/v, BT by default) and `KC` K chunk of every projection (BT and BTQ
/// must divide T, KC every K); the output columns per task of the q/k/v, o, gate/up and down
/// projections `BNQ`, `BNO`, `BNF` and `BND` (multiples of the weight's tile rows; BNQ, rotation
/// pairs, divides Dh / 2 or is a multiple of it: whole heads, std.rope); and `BQ` queries, `BK` keys per attention block (BQ must divide T, BK must divide S);
/// o and down in `SK` parts of K (std.linear's `linear_partial_rows`: SK * KC must divide their
/// K), summed into the residual stream by the norms after them, `NR` rows per task. Products run
/// on the tensor cores with bf16 operands: the normalised rows and the attention probabilities
/// are rounded to bf16 here, where the decode form keeps them f32 (docs/language.md §10.1).
/// `pos0 + T` must be at most S.
fn llama_block_prefill<T, D, QD, KVH, S, Dh, F,
    RQ = 16, RO = 16, RF = 16, RD = 16, CQ = 512, CO = 512, CF = 512, CD = 512,
    BT = 16, BTQ = BT, KC = 64, BQ = 16, BK = 64, BNQ = RQ, BNO = RO, BNF = RF, BND = RD, SK = 1, NR = 1, eps: float = 1e-5, theta: float = 500000.0,
    rope_factor: float = 1.0, rope_low: float = 1.0, rope_high: float = 4.0,
    rope_orig: float = 8192.0>(
    x: f32[T, D], xn: bf16[T, D], pos0: i32,
    w_qkv: bf16[QD + 2 * KVH * Dh, D] tiled(RQ, CQ),
    k_cache: inout bf16[KVH, S, Dh],
    v_cache: inout bf16[KVH, S, Dh],
    w_o: bf16[D, QD] tiled(RO, CO),
    mlp_norm: bf16[D],
    w_gate_up: bf16[2 * F, D] tiled(RF, CF),
    w_down: bf16[D, F] tiled(RD, CD),
    next_norm: bf16[D]) -> (y: f32[T, D], yn: bf16[T, D]) {
    let q = qkv_rope_append_rows(w_qkv, xn, pos0, k_cache, v_cache, BN = BNQ, BT = BTQ, KC = KC,
        theta = theta, rope_factor = rope_factor, rope_low = rope_low,
        rope_high = rope_high, rope_orig = rope_orig);
    let a = attention_prefill(q, k_cache, v_cache, pos0, BQ = BQ, BK = BK);
    // o and down in SK parts of K each, added by the ops that read them.
    let po = linear_partial_rows(w_o, a, S = SK, BN = BNO, BT = BT, KC = KC);
    let (h, hn) = residual_rmsnorm_rows(po, x, mlp_norm, BR = NR, eps = eps);
    let act = swiglu_rows(w_gate_up, hn, BN = BNF, BT = BT, KC = KC);
    let pd = linear_partial_rows(w_down, act, S = SK, BN = BND, BT = BT, KC = KC);
    let (y, yn) = residual_rmsnorm_rows(pd, h, next_norm, BR = NR, eps = eps);
    return (y, yn);
}

/// A prefill's last layer when only row `last` goes on, to the head: every row's k and v into the
/// caches, as `llama_block_prefill` appends them, then the rest of the layer for row `last` alone,
/// as the decode step runs it (`llama_block_after_qkv` at position pos0 + last, from that row's
/// rotated query and residual stream). The other rows' outputs would be read by nothing, so they
/// are not computed. Returns row `last`'s hidden state. Tuning: the q/k/v tasks' as
/// `llama_block_prefill`'s (`BTQ`, `KC`, `BNQ`), the rest as `llama_block`'s (`NS`, `AC`).
fn llama_block_prefill_last<T, D, QD, KVH, S, Dh, F,
    RQ = 16, RO = 16, RF = 16, RD = 16, CQ = 512, CO = 512, CF = 512, CD = 512,
    BTQ = 16, KC = 64, BNQ = RQ, NS = 4, AC = 64, eps: float = 1e-5, theta: float = 500000.0,
    rope_factor: float = 1.0, rope_low: float = 1.0, rope_high: float = 4.0,
    rope_orig: float = 8192.0>(
    x: f32[T, D], xn: bf16[T, D], pos0: i32, last: i32,
    w_qkv: bf16[QD + 2 * KVH * Dh, D] tiled(RQ, CQ),
    k_cache: inout bf16[KVH, S, Dh],
    v_cache: inout bf16[KVH, S, Dh],
    w_o: bf16[D, QD] tiled(RO, CO),
    mlp_norm: bf16[D],
    w_gate_up: bf16[2 * F, D] tiled(RF, CF),
    w_down: bf16[D, F] tiled(RD, CD)) -> f32[D] {
    let q = qkv_rope_append_rows(w_qkv, xn, pos0, k_cache, v_cache, BN = BNQ, BT = BTQ, KC = KC,
        theta = theta, rope_factor = rope_factor, rope_low = rope_low,
        rope_high = rope_high, rope_orig = rope_orig);
    let q_last = take_row_bf16(q, last);
    let x_last = take_row(x, last);
    let pos = row_position(pos0, last);
    let y = llama_block_after_qkv(x_last, q_last, pos, k_cache, v_cache, w_o, mlp_norm,
        w_gate_up, w_down, NS = NS, AC = AC, eps = eps);
    return y;
}

/// The head after a prefill: `llama_head` on row `last` of x (the chunk's last real token: a
/// partial chunk's rows after it are padding), so the logits and next token are computed exactly as
/// the decode step computes them from a hidden state.
fn llama_head_prefill<V, T, D, R = 16, C = 512, eps: float = 1e-5>(x: f32[T, D], last: i32, norm: bf16[D],
    w: bf16[V, D] tiled(R, C)) -> (logits: f32[V], next: i32) {
    let h = take_row(x, last);
    let (lg, nx) = llama_head(h, norm, w, eps = eps);
    return (lg, nx);
}
