// Llama 3: a decode step (one token in, f32 logits and the greedy next token out) and prefill
// steps (a chunk of prompt tokens into the KV cache at once, on tensor cores), over one set of
// weights and caches: one kernel with an entry per step.
// Weights are read by their Hugging Face LlamaForCausalLM safetensors names; the layer logic is
// std.llama (generic over shapes), this file holds the configurations, the storage and the steps.
//
//   mkdsl build examples/llama.mk                        # Llama-3.2-1B (the first config)
//   mkdsl build examples/llama.mk --config llama_3_8b    # Llama-3-8B
//   mkdsl build examples/llama.mk --config tiny          # the test model (examples/llama_tiny.mk)
import std.embed;
import std.llama;
import std.norm;
import std.sampling;

/// Llama-3.2-1B (meta-llama/Llama-3.2-1B), the default configuration.
config llama_3_2_1b {
    /// Vocabulary size (rows of the embedding and of the LM head).
    vocab = 128_256;
    /// Hidden size.
    hidden = 2048;
    /// Number of decoder layers.
    layers = 16;
    /// Query heads.
    heads = 32;
    /// Key/value heads (grouped-query attention: heads / kv_heads query heads share one).
    kv_heads = 8;
    /// Size of one attention head.
    head_dim = 64;
    /// MLP intermediate size.
    ffn = 8192;
    /// RoPE base.
    rope_theta = 500000.0;
    /// llama3 RoPE scaling (rope_scaling in config.json); 1.0 turns it off.
    rope_factor = 32.0;
    /// llama3 RoPE scaling: low_freq_factor.
    rope_low_freq = 1.0;
    /// llama3 RoPE scaling: high_freq_factor.
    rope_high_freq = 4.0;
    /// llama3 RoPE scaling: original_max_position_embeddings.
    rope_orig_ctx = 8192.0;
    /// RMSNorm epsilon.
    rms_eps = 1e-5;
    /// KV-cache length: positions 0 .. max_seq - 1.
    max_seq = 4096;
    /// Tuning, per projection: rows per task (R) and K chunk (C) of its weight's `tiled(R, C)`
    /// layout. Each chunk is one contiguous R x C tile copied into the loader ring, whose slots
    /// fit the largest tile: 32 KB tiles everywhere keep the ring's 6 slots full (measured on an
    /// H200 in bench/results/2026-11-29-perf-4 and bench/NOTES.md). q/k/v rows divide head_dim / 2.
    /// 16 x 1024: 96 q/k/v tasks, each half of a head's rotation pairs (bench/results/2026-12-01-perf-6).
    qkv_rows = 16;
    /// Tuning: K chunk of the q/k/v projection; divides hidden.
    qkv_chunk = 1024;
    /// Tuning: rows per task of the attention output projection.
    o_rows = 16;
    /// Tuning: K chunk of the attention output projection; divides heads * head_dim.
    o_chunk = 1024;
    /// Tuning: gate (and as many up) rows per task of the MLP's gate/up projection. 64 x 256:
    /// one 512 KB task per SM (128 tasks; bench/results/2026-12-01-perf-6).
    ffn_rows = 64;
    /// Tuning: K chunk of the gate/up projection; divides hidden.
    ffn_chunk = 256;
    /// Tuning: rows per task of the MLP down projection.
    down_rows = 16;
    /// Tuning: K chunk of the down projection; divides ffn.
    down_chunk = 1024;
    /// Tuning: vocabulary rows per LM-head task; one argmax partial per task.
    lm_head_rows = 128;
    /// Tuning: K chunk of the LM head; divides hidden.
    lm_head_chunk = 128;
    /// Tuning: attention split-K parts per query head.
    attn_splits = 4;
    /// Tuning: cache positions per attention chunk; divides max_seq.
    attn_chunk = 128;
    /// Prompt tokens per prefill step (the last chunk of a prompt may be partial: a shorter
    /// prompt still runs one whole chunk).
    chunk = 512;
    /// Prompt tokens per step of the short prefill entry, `prefill_short`: a prompt (or the rest
    /// of one) that it holds runs one short step instead of a whole `chunk`.
    short_chunk = 128;
    /// Tuning of `prefill_short`: rows per projection task, o and down in this many parts of K,
    /// and queries per attention block: more tasks for the SMs from fewer rows; its K chunk and
    /// q/k/v rotation pairs per task (the long step's 64 and 32 spill in its 64-row tasks: on
    /// sm_80's mma.sync, and on sm_90a).
    short_rows = 64;
    short_k_chunk = 128;
    short_qkv_cols = 16;
    short_splits = 4;
    short_queries = 64;
    /// Tuning, the prefill (bench/results/2026-12-03-prefill-tiles, 512 tokens on an H200): 128
    /// rows x 64 columns per projection task (16 for q/k/v, whose RoPE epilogue would not fit),
    /// a K chunk of 128, norms of 4 rows, 64 x 128 attention blocks: 11.4 ms, against 30.3 ms
    /// with 32 x 16 tasks in chunks of 128 tokens; 8.4 ms once gate/up and q/k/v share their
    /// staged rows (bench/results/2026-12-04-prefill-shared-a, where a K chunk of 64 and 32-column
    /// q/k/v tasks were slower); 5.37 ms on wgmma, where 128-column gate/up tasks, 32-pair q/k/v
    /// tasks and 128 x 64 or 64 x 64 attention blocks were not faster
    /// (bench/results/2026-12-05-wgmma-check). The tiles need up to 227 KB of shared memory:
    /// an A100 (163 KB a block) takes `--set prefill_rows=64 --set prefill_qkv_rows=64 --set
    /// short_rows=64`, and this config's gate/up and K chunk `--set prefill_ffn_cols=64 --set
    /// prefill_k_chunk=128` (tests/codegen/check_targets.sh); an AMDGPU build (64 KiB of LDS per
    /// workgroup) smaller ones, e.g. `--set chunk=128 --set prefill_rows=32 --set
    /// prefill_qkv_rows=32 --set prefill_k_chunk=32 --set prefill_cols=16 --set prefill_queries=16
    /// --set prefill_keys=64 --set prefill_norm_rows=1 --set short_chunk=64 --set short_rows=32
    /// --set short_k_chunk=32 --set short_queries=16` (tests/codegen/check_amdgpu.sh).
    /// Rows per task of the prefill projections; divides chunk.
    prefill_rows = 128;
    /// Tuning: rows per task of the prefill q/k/v projection (divides chunk), and the K chunk of
    /// the prefill projections (divides hidden, heads * head_dim and ffn). q/k/v tasks of 256 x 64
    /// (96, one an SM) read a third fewer operand bytes on the busiest SM than 384 of 128 x 32;
    /// with a K chunk of 64 (four copy stages in flight instead of two) the 512-token step went
    /// 4.06 -> 3.60 ms, the q/k/v tiles alone 3.95 (H100, bench/results/2026-12-07-qkv); tasks of
    /// two whole heads over 128 rows (96 of 128 x 128) read a fifth fewer again: the step 3.24-3.26
    /// ms, against 3.30-3.31 for the previous tiles in an earlier run (H100,
    /// bench/results/2026-12-07-heads).
    prefill_qkv_rows = 128;
    prefill_k_chunk = 64;
    /// Tuning: output columns per task of the prefill projections (multiples of the weights'
    /// tile rows above): q/k/v rotation pairs (dividing head_dim / 2, or whole heads: a multiple
    /// of it), o and down, gate/up.
    prefill_qkv_cols = 64;
    prefill_cols = 128;
    /// gate/up tasks of 128 x 256 read a quarter fewer operand bytes than 128 x 128: 4.42 ->
    /// 4.34 ms (H100, bench/results/2026-12-06-rows).
    prefill_ffn_cols = 128;
    /// Tuning: o and down in this many parts of K (tasks of prefill_cols columns over K / parts),
    /// summed by the ops after them: 128 x 128 tiles in two parts read a third fewer operand bytes
    /// than 128 x 64 over all of K for as many tasks; 4.52 -> 4.42 ms (H100,
    /// bench/results/2026-12-06-splitk, bench/NOTES.md 29).
    prefill_splits = 2;
    /// Tuning: rows per task of the prefill norms (divides chunk; each reads its rows whole).
    prefill_norm_rows = 4;
    /// Tuning: queries and keys per prefill attention block; divide chunk and max_seq. Blocks of
    /// 128 x 32 run as fragment runs (the scores in registers, backend/tile/rows.cpp): 3.59 ->
    /// 3.36 ms at 512 tokens against 64 x 128 blocks through shared memory (H100,
    /// bench/results/2026-12-07-fragments); 128 x 64 blocks 2% faster again (H100,
    /// bench/results/2026-12-07-k64). On sm_90 (mma.sync products) they spill 28 bytes: an sm_90
    /// build takes `--set prefill_keys=32` (tests/codegen/check_targets.sh).
    prefill_queries = 128;
    prefill_keys = 64;
}

/// Llama-3-8B (meta-llama/Meta-Llama-3-8B): wider, deeper, no RoPE scaling, untied LM head.
config llama_3_8b : llama_3_2_1b {
    hidden = 4096;
    layers = 32;
    head_dim = 128;
    ffn = 14336;
    rope_factor = 1.0;
    max_seq = 8192;
    /// 96 q/k/v tasks of 512 KB: as many bytes on the busiest SM as 192 of 256 KB, and fewer tasks.
    qkv_rows = 32;
    qkv_chunk = 512;
    /// 128 gate/up tasks of 1.8 MB, one an SM, instead of 224 of 1 MB (92 SMs doing two):
    /// 4.145 -> 4.086 ms over 520 steps (bench/results/2026-12-01-perf-7).
    ffn_rows = 112;
    ffn_chunk = 128;
    prefill_ffn_cols = 112;
    prefill_qkv_cols = 32;
    /// Prefill tasks of the 1B's 128 rows (64 were chosen when q/k/v's RoPE epilogue over 32
    /// pairs did not fit in shared memory; they spilled on sm_90a when the prefill still had a
    /// loader warp and 96 registers a thread).
    /// Attention blocks of 32 x 128 (64 x 128 needs 243 KB at this head size; 32 x 64 spills on
    /// mma.sync, sm_80 and sm_90). Neither is timed (bench/NOTES.md 26). o and down as the 1B's,
    /// 128 x 128 in two parts of K: its prefill parity holds on them (bench/results/2026-12-06-splitk).
    /// The 1B's q/k/v tasks and K chunk are not measured here: it keeps the tiles its parity holds on.
    prefill_rows = 128;
    prefill_qkv_rows = 128;
    prefill_k_chunk = 128;
    prefill_queries = 32;
    prefill_keys = 128;
    /// The short step's tiles as the long one's (its 1B tiles spill here: on sm_90a with 64-query
    /// attention blocks, on sm_80 with 64-row projection tasks).
    short_rows = 128;
    short_splits = 2;
    short_queries = 32;
    short_qkv_cols = 32;
}

/// Tiny Llama for tests (same structure, random weights).
config tiny : llama_3_2_1b {
    vocab = 256;
    hidden = 64;
    layers = 2;
    heads = 4;
    kv_heads = 2;
    head_dim = 16;
    ffn = 128;
    rope_factor = 1.0;
    max_seq = 64;
    qkv_rows = 8;
    o_rows = 8;
    ffn_rows = 8;
    down_rows = 8;
    lm_head_rows = 8;
    qkv_chunk = 64;
    o_chunk = 64;
    ffn_chunk = 64;
    down_chunk = 64;
    lm_head_chunk = 64;
    attn_splits = 2;
    /// 16 spilled 4 bytes on sm_80 in the prefill steps, whose last layer runs decode's
    /// attention for its last row (a 512-thread block: 128 registers a thread).
    attn_chunk = 32;
    chunk = 32;
    prefill_rows = 16;
    prefill_qkv_rows = 16;
    prefill_k_chunk = 64;
    prefill_queries = 16;
    prefill_keys = 16;
    prefill_qkv_cols = 8;
    /// Two weight tiles per o, down and gate/up task: the GPU check of operands over several
    /// tiles (scripts/gpu-check.sh `prefill`), where examples/llama_tiny.mk keeps one.
    prefill_cols = 16;
    prefill_ffn_cols = 16;
    /// o's K (heads * head_dim = 64) is one K chunk: one part.
    prefill_splits = 1;
    short_chunk = 16;
    short_rows = 16;
    short_k_chunk = 64;
    short_qkv_cols = 8;
    short_splits = 1;
    short_queries = 16;
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
/// embed_tokens because it is repacked to a tiled layout.
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

/// The first L layers over a chunk of T prompt tokens at positions pos0 .. pos0 + T - 1,
/// appending their k and v to the caches: the hidden rows x and, normalised by layer L's input
/// norm, xn (when L is `layers`, by the last layer's own: unused, as the head normalises the rows
/// it reads). Tuning per step: `BT` rows per projection task (`BTQ` for q/k/v), the K chunk `KC`,
/// q/k/v rotation pairs per task `BNQ`, o and down in `SK` parts of K, `BQ` queries per attention
/// block.
fn prefill_layers<T, L, BT, BTQ, KC, BNQ, SK, BQ>(tokens: i32[T], pos0: i32) -> (x: f32[T, hidden], xn: bf16[T, hidden]) {
    // One task per token: 64-column tasks (the stdlib's default) made 16384 tasks of a
    // microsecond each for a 512-token chunk of the 1B (3% of its prefill step).
    var x: f32[T, hidden] = embed_rows(embed_tokens, tokens, C = hidden);
    var xn: bf16[T, hidden] = rmsnorm_rows(x, layer[0].input_norm, BR = prefill_norm_rows, eps = rms_eps);
    for l in 0 .. L {
        // Each layer ends with the next one's input norm (the last layer with its own).
        let (y, yn) = llama_block_prefill(x, xn, pos0,
            layer[l].qkv, layer[l].k_cache, layer[l].v_cache,
            layer[l].o_proj, layer[l].post_norm, layer[l].gate_up, layer[l].down,
            layer[l + 1 - (l + 1) / layers].input_norm,
            BT = BT, BTQ = BTQ, KC = KC, BNQ = BNQ, BNO = prefill_cols,
            BNF = prefill_ffn_cols, BND = prefill_cols, SK = SK, NR = prefill_norm_rows,
            BQ = BQ, BK = prefill_keys, eps = rms_eps,
            theta = rope_theta, rope_factor = rope_factor, rope_low = rope_low_freq,
            rope_high = rope_high_freq, rope_orig = rope_orig_ctx);
        x = y;
        xn = yn;
    }
    return (x, xn);
}

/// A chunk of prompt tokens into the caches, and the logits and greedy next token of its row
/// `last`: every layer but the last over the chunk, then the last layer's k and v for every row
/// and the rest of it for row `last` alone (std.llama's `llama_block_prefill_last`), the head on
/// that row. Tuning as `prefill_layers`.
fn prefill_last_row<T, BT, BTQ, KC, BNQ, SK, BQ>(tokens: i32[T], pos0: i32, last: i32) -> (logits: f32[vocab], next: i32) {
    let (x, xn) = prefill_layers(tokens, pos0, L = layers - 1, BT = BT, BTQ = BTQ, KC = KC, BNQ = BNQ, SK = SK, BQ = BQ);
    let h = llama_block_prefill_last(x, xn, pos0, last,
        layer[layers - 1].qkv, layer[layers - 1].k_cache, layer[layers - 1].v_cache,
        layer[layers - 1].o_proj, layer[layers - 1].post_norm, layer[layers - 1].gate_up,
        layer[layers - 1].down,
        BTQ = BTQ, KC = KC, BNQ = BNQ, NS = attn_splits, AC = attn_chunk, eps = rms_eps,
        theta = rope_theta, rope_factor = rope_factor, rope_low = rope_low_freq,
        rope_high = rope_high_freq, rope_orig = rope_orig_ctx);
    let (lg, nx) = llama_head(h, final_norm, lm_head, eps = rms_eps);
    return (lg, nx);
}

/// One prefill step: a chunk of prompt tokens (pos0 + chunk at most max_seq) into the caches,
/// and the logits and greedy next token of row `last` (the last real token of a partial chunk;
/// later rows are padding, and their cache rows are overwritten by the decode steps after it).
step prefill(tokens: i32[chunk], pos0: i32, last: i32) -> (logits: f32[vocab], next: i32) {
    let (lg, nx) = prefill_last_row(tokens, pos0, last, BT = prefill_rows, BTQ = prefill_qkv_rows, KC = prefill_k_chunk, BNQ = prefill_qkv_cols, SK = prefill_splits, BQ = prefill_queries);
    return (lg, nx);
}

/// `prefill` over a chunk of `short_chunk` tokens: for a short prompt, or the rest of a long one,
/// that it holds (the runtime takes the shortest prefill step that holds what is left).
step prefill_short(tokens: i32[short_chunk], pos0: i32, last: i32) -> (logits: f32[vocab], next: i32) {
    let (lg, nx) = prefill_last_row(tokens, pos0, last, BT = short_rows, BTQ = short_rows, KC = short_k_chunk, BNQ = short_qkv_cols, SK = short_splits, BQ = short_queries);
    return (lg, nx);
}

/// `prefill`, plus the logits of every row of the chunk: for scoring a text, and for checking a
/// prompt position by position. The LM head over every row costs more than the layers of a
/// small model.
step prefill_logits(tokens: i32[chunk], pos0: i32, last: i32)
    -> (logits: f32[vocab], next: i32, row_logits: f32[chunk, vocab]) {
    let (x, xn_unused) = prefill_layers(tokens, pos0, L = layers, BT = prefill_rows, BTQ = prefill_qkv_rows, KC = prefill_k_chunk, BNQ = prefill_qkv_cols, SK = prefill_splits, BQ = prefill_queries);
    let (lg, nx) = llama_head_prefill(x, last, final_norm, lm_head, eps = rms_eps);
    let xn = rmsnorm_rows(x, final_norm, eps = rms_eps);
    let rows = lm_head_logits_rows(lm_head, xn, BT = prefill_rows, KC = prefill_k_chunk);
    return (lg, nx, rows);
}
