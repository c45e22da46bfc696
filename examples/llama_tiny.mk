// Tiny Llama for tests: the model of examples/llama.mk (same storage names, same steps), with one
// small configuration, so tests can build random-weight checkpoints in a blink.
// (A config can only live in the root file, so the model part is repeated here; the layer logic
// itself is shared through std.llama.)
//
//   mkdsl build examples/llama_tiny.mk
import std.embed;
import std.llama;
import std.norm;
import std.sampling;

/// Tiny Llama: 2 layers, hidden 64, 4 query heads and 2 KV heads of 16, vocabulary 256.
config tiny {
    /// Vocabulary size (rows of the embedding and of the LM head).
    vocab = 256;
    /// Hidden size.
    hidden = 64;
    /// Number of decoder layers.
    layers = 2;
    /// Query heads.
    heads = 4;
    /// Key/value heads (grouped-query attention: heads / kv_heads query heads share one).
    kv_heads = 2;
    /// Size of one attention head.
    head_dim = 16;
    /// MLP intermediate size.
    ffn = 128;
    /// RoPE base.
    rope_theta = 500000.0;
    /// llama3 RoPE scaling (rope_scaling in config.json); 1.0 turns it off.
    rope_factor = 1.0;
    /// llama3 RoPE scaling: low_freq_factor.
    rope_low_freq = 1.0;
    /// llama3 RoPE scaling: high_freq_factor.
    rope_high_freq = 4.0;
    /// llama3 RoPE scaling: original_max_position_embeddings.
    rope_orig_ctx = 8192.0;
    /// RMSNorm epsilon.
    rms_eps = 1e-5;
    /// KV-cache length: positions 0 .. max_seq - 1.
    max_seq = 64;
    /// Tuning (each projection streams R x C weight tiles; equal R x C keeps the loader ring's
    /// slots full): rows per task of the q/k/v projection (its layout's R); divides head_dim / 2.
    qkv_rows = 8;
    /// Tuning: K chunk of the q/k/v projection; divides hidden.
    qkv_chunk = 64;
    /// Tuning: rows per task of the attention output projection.
    o_rows = 8;
    /// Tuning: K chunk of the attention output projection; divides heads * head_dim.
    o_chunk = 64;
    /// Tuning: gate (and as many up) rows per task of the MLP's gate/up projection.
    ffn_rows = 8;
    /// Tuning: K chunk of the gate/up projection; divides hidden.
    ffn_chunk = 64;
    /// Tuning: rows per task of the MLP down projection.
    down_rows = 8;
    /// Tuning: K chunk of the down projection; divides ffn.
    down_chunk = 64;
    /// Tuning: vocabulary rows per LM-head task (its layout's R); one argmax partial per task.
    lm_head_rows = 8;
    /// Tuning: K chunk of the LM head; divides hidden.
    lm_head_chunk = 64;
    /// Tuning: attention split-K parts per query head.
    attn_splits = 2;
    /// Tuning: cache positions per attention chunk; divides max_seq.
    attn_chunk = 16;
    /// Prompt tokens per prefill step (the last chunk of a prompt may be partial).
    chunk = 16;
    /// Tuning: rows per task of the prefill projections; divides chunk.
    prefill_rows = 16;
    /// Tuning: K chunk of the prefill projections; divides hidden, heads * head_dim and ffn.
    /// 32, so that o and down run in two parts (prefill_splits) on this model too.
    prefill_k_chunk = 32;
    /// Tuning: o and down in this many parts of K, summed by the ops after them.
    prefill_splits = 2;
    /// Tuning: queries and keys per prefill attention block; divide chunk and max_seq.
    prefill_queries = 16;
    prefill_keys = 16;
}

static_assert(heads % kv_heads == 0, "heads must be a multiple of kv_heads");
static_assert(head_dim % (2 * qkv_rows) == 0, "qkv_rows must divide head_dim / 2 (RoPE pairs stay in one task)");
static_assert(max_seq % attn_chunk == 0, "attn_chunk must divide max_seq");

/// Token embedding table (row-major: the lookup reads one contiguous row).
weight embed_tokens: bf16[vocab, hidden] = "model.embed_tokens.weight";

/// Per-layer weights and KV cache.
group layer[l in 0 .. layers] {
    /// RMSNorm gain before attention.
    weight input_norm: bf16[hidden] = "model.layers.{l}.input_layernorm.weight";
    /// q, k and v projections, concatenated along rows: one op computes all three.
    weight qkv: bf16[(heads + 2 * kv_heads) * head_dim, hidden] tiled(qkv_rows, qkv_chunk) = [
        "model.layers.{l}.self_attn.q_proj.weight",
        "model.layers.{l}.self_attn.k_proj.weight",
        "model.layers.{l}.self_attn.v_proj.weight",
    ];
    /// Attention output projection.
    weight o_proj: bf16[hidden, heads * head_dim] tiled(o_rows, o_chunk) =
        "model.layers.{l}.self_attn.o_proj.weight";
    /// RMSNorm gain before the MLP.
    weight post_norm: bf16[hidden] = "model.layers.{l}.post_attention_layernorm.weight";
    /// gate_proj and up_proj rows concatenated: one task reads ffn_rows of each.
    weight gate_up: bf16[2 * ffn, hidden] tiled(ffn_rows, ffn_chunk) = [
        "model.layers.{l}.mlp.gate_proj.weight",
        "model.layers.{l}.mlp.up_proj.weight",
    ];
    /// MLP down projection.
    weight down: bf16[hidden, ffn] tiled(down_rows, down_chunk) = "model.layers.{l}.mlp.down_proj.weight";
    /// Keys of positions 0 .. max_seq - 1, per KV head (rotated).
    state k_cache: bf16[kv_heads, max_seq, head_dim];
    /// Values of positions 0 .. max_seq - 1, per KV head.
    state v_cache: bf16[kv_heads, max_seq, head_dim];
}

/// Final RMSNorm gain.
weight final_norm: bf16[hidden] = "model.norm.weight";

/// LM head. Tied vs untied: Llama-3.2-1B ties it to the embedding (tie_word_embeddings = true, its
/// checkpoint has no "lm_head.weight"); Llama-3-8B has its own. A weight's source is a literal, so
/// the model names "lm_head.weight" and the runtime falls back to "model.embed_tokens.weight" when
/// a checkpoint has no "lm_head.weight" (transformers' tying rule). It is declared apart from
/// embed_tokens because it is repacked to a row-tiled layout.
weight lm_head: bf16[vocab, hidden] tiled(lm_head_rows, lm_head_chunk) = "lm_head.weight";

/// One decode step: embed `token`, run every layer at position `pos` (appending its k and v to the
/// caches), and return the f32 logits and the greedy next token. `pos` must be in [0, max_seq).
step decode(token: i32, pos: i32) -> (logits: f32[vocab], next: i32) {
    var x: f32[hidden] = embed(embed_tokens, token);
    for l in 0 .. layers {
        x = llama_block(x, pos,
            layer[l].input_norm, layer[l].qkv, layer[l].k_cache, layer[l].v_cache,
            layer[l].o_proj, layer[l].post_norm, layer[l].gate_up, layer[l].down,
            NS = attn_splits, AC = attn_chunk, eps = rms_eps,
            theta = rope_theta, rope_factor = rope_factor, rope_low = rope_low_freq,
            rope_high = rope_high_freq, rope_orig = rope_orig_ctx);
    }
    let (lg, nx) = llama_head(x, final_norm, lm_head, eps = rms_eps);
    return (lg, nx);
}

/// Every layer over a chunk of `chunk` prompt tokens at positions pos0 .. pos0 + chunk - 1,
/// appending their k and v to the caches: the hidden rows both prefill steps finish from.
fn prefill_layers(tokens: i32[chunk], pos0: i32) -> f32[chunk, hidden] {
    var x: f32[chunk, hidden] = embed_rows(embed_tokens, tokens);
    var xn: bf16[chunk, hidden] = rmsnorm_rows(x, layer[0].input_norm, eps = rms_eps);
    for l in 0 .. layers {
        // Each layer ends with the next one's input norm (the last with its own, unused).
        let (y, yn) = llama_block_prefill(x, xn, pos0,
            layer[l].qkv, layer[l].k_cache, layer[l].v_cache,
            layer[l].o_proj, layer[l].post_norm, layer[l].gate_up, layer[l].down,
            layer[l + 1 - (l + 1) / layers].input_norm,
            BT = prefill_rows, KC = prefill_k_chunk, SK = prefill_splits, BQ = prefill_queries, BK = prefill_keys,
            eps = rms_eps,
            theta = rope_theta, rope_factor = rope_factor, rope_low = rope_low_freq,
            rope_high = rope_high_freq, rope_orig = rope_orig_ctx);
        x = y;
        xn = yn;
    }
    return x;
}

/// One prefill step: a chunk of prompt tokens (pos0 + chunk at most max_seq) into the caches,
/// and the logits and greedy next token of row `last` (the last real token of a partial chunk;
/// later rows are padding, and their cache rows are overwritten by the decode steps after it).
step prefill(tokens: i32[chunk], pos0: i32, last: i32) -> (logits: f32[vocab], next: i32) {
    let x = prefill_layers(tokens, pos0);
    let (lg, nx) = llama_head_prefill(x, last, final_norm, lm_head, eps = rms_eps);
    return (lg, nx);
}

/// `prefill`, plus the logits of every row of the chunk: for scoring a text, and for checking a
/// prompt position by position. The LM head over every row costs more than the layers of a
/// small model.
step prefill_logits(tokens: i32[chunk], pos0: i32, last: i32)
    -> (logits: f32[vocab], next: i32, row_logits: f32[chunk, vocab]) {
    let x = prefill_layers(tokens, pos0);
    let (lg, nx) = llama_head_prefill(x, last, final_norm, lm_head, eps = rms_eps);
    let xn = rmsnorm_rows(x, final_norm, eps = rms_eps);
    let rows = lm_head_logits_rows(lm_head, xn, BT = prefill_rows, KC = prefill_k_chunk);
    return (lg, nx, rows);
}
