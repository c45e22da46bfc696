// mkref: a naive, independent C++ implementation of one Llama-3 decode step (transformers'
// LlamaForCausalLM, batch 1, one token at a time with a KV cache), used as a test oracle for the
// mkdsl CPU interpreter. Plain loops, no code shared with the compiler.
//
// Numerics modes:
//   Numerics::MkDsl  rounds to bf16 exactly where the stdlib .mk ops (stdlib/{embed,rope,attention,
//                    mlp,linear,sampling}.mk, as used by stdlib/llama.mk) round, and nowhere else:
//                    the residual stream is f32 (the bf16 embedding row, exact; residual adds
//                    residual + acc in f32, not rounded); RMSNorm in f32 and not rounded
//                    (gain * (x * rsqrt(mean(x^2) + eps))); the matvecs multiply the bf16 weights by
//                    that f32 vector, accumulating in f32; q/k/v rounded to bf16, RoPE in f32 on
//                    them, rounded once; KV cache in bf16; attention scores and softmax in f32,
//                    output rounded to bf16 once; o_proj and down added to the residual unrounded;
//                    silu(gate) * up in f32 on the f32 accumulators, rounded to bf16 once (the down
//                    projection's input); logits the f32 accumulators, not rounded.
//                    This is what the interpreter of examples/llama_tiny.mk must match.
//   Numerics::F32    everything in f32 (weights taken as given), for sanity checks; matches
//                    transformers run in float32.
//   Numerics::F64    everything in float64 with no rounding anywhere (weights taken as given, the
//                    RoPE frequencies from the formula in float64): the ground truth that both the
//                    interpreter and transformers' float32 run approximate. Its logits are returned
//                    rounded to f32 once.
//   Numerics::HfBf16 transformers' eager bf16 path: every activation a bf16 tensor. RMSNorm
//                    x.float() * rsqrt(mean(x^2) + eps), rounded, times the bf16 gain, rounded;
//                    matvecs accumulate in f32 and round; residual adds of two bf16 values rounded;
//                    silu(bf16 gate) rounded, times bf16 up, rounded; logits rounded to bf16 and
//                    widened. q/k/v rounded, KV cache in bf16 as MkDsl; cos/sin rounded to bf16 and the rotation done as bf16 products and a bf16 sum;
//                    q.k rounded to bf16 then scaled in bf16, softmax in f32 rounded to bf16
//                    probabilities, p.V accumulated in f32 and rounded. Only for explaining the gap
//                    between MkDsl and transformers' bf16 logits; not a test target.
// Summation order: every dot product and mean is a plain sequential f32 loop over the index. The
// matvecs, and the split attention (Config::attn_splits > 0), accumulate their dot products with a
// fused multiply-add per term (std::fma), as the interpreter's rowdot/coldot do; the plain attention
// path uses separate products and sums.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mkref {

/// Model shape and constants (transformers' LlamaConfig names in comments).
struct Config {
    int vocab = 256;        // vocab_size
    int hidden = 64;        // hidden_size
    int layers = 2;         // num_hidden_layers
    int heads = 4;          // num_attention_heads
    int kv_heads = 2;       // num_key_value_heads
    int head_dim = 16;      // head_dim
    int ffn = 128;          // intermediate_size
    float rope_theta = 500000.0f;
    float rms_eps = 1e-5f;  // rms_norm_eps
    int max_seq = 64;       // KV-cache length
    // Optional llama3 RoPE scaling (rope_scaling / rope_parameters with rope_type "llama3");
    // rope_factor == 1 turns it off.
    float rope_factor = 1.0f;
    float rope_low_freq = 1.0f;
    float rope_high_freq = 4.0f;
    float rope_orig_ctx = 8192.0f;
    // Accumulation order (MkDsl and F32 modes). 0 = plain: every dot product is one sequential
    // f32 sum and attention is a two-pass softmax over positions 0 .. pos. Set them to the .mk
    // tuning values (k_chunk; attn_splits, attn_chunk) to sum as the stdlib ops are written:
    // matvecs as `acc += rowdot(chunk of k_chunk columns)` (each chunk summed from 0, then added),
    // attention as std.attention's attention_partial (attn_splits ranges of whole attn_chunk
    // chunks, online softmax per chunk) + attention_combine. Same rounding points either way; only
    // the f32 summation order changes, which moves a bf16 rounding now and then (see
    // tests/data/README.md: order alone moves logits by up to ~1e-2 relative L2).
    int k_chunk = 0;
    int attn_splits = 0;
    int attn_chunk = 0;
};

enum class Numerics { MkDsl, F32, HfBf16, F64 };

/// bf16 helpers (round to nearest, ties to even; NaN stays NaN).
uint16_t f32_to_bf16_bits(float x);
float bf16_bits_to_f32(uint16_t b);
inline float bf16_round(float x) { return bf16_bits_to_f32(f32_to_bf16_bits(x)); }

/// Weights by Hugging Face name, each a row-major float array of the tensor's elements:
///   model.embed_tokens.weight                        [vocab, hidden]
///   model.layers.{l}.input_layernorm.weight          [hidden]
///   model.layers.{l}.self_attn.q_proj.weight         [heads * head_dim, hidden]
///   model.layers.{l}.self_attn.k_proj.weight         [kv_heads * head_dim, hidden]
///   model.layers.{l}.self_attn.v_proj.weight         [kv_heads * head_dim, hidden]
///   model.layers.{l}.self_attn.o_proj.weight         [hidden, heads * head_dim]
///   model.layers.{l}.post_attention_layernorm.weight [hidden]
///   model.layers.{l}.mlp.gate_proj.weight            [ffn, hidden]
///   model.layers.{l}.mlp.up_proj.weight              [ffn, hidden]
///   model.layers.{l}.mlp.down_proj.weight            [hidden, ffn]
///   model.norm.weight                                [hidden]
///   lm_head.weight                                   [vocab, hidden] (absent: the embedding)
/// In MkDsl and HfBf16 modes the values are rounded to bf16 on load (bf16 checkpoints are exact).
using Weights = std::map<std::string, std::vector<float>>;

/// Rotary inverse frequencies inv_freq[i], i in 0 .. head_dim / 2, in f32 as transformers and
/// std.rope compute them (with the llama3 scaling when rope_factor != 1).
std::vector<float> rope_inv_freq(const Config& c);

class LlamaRef {
public:
    /// Throws std::runtime_error when a weight is missing or has the wrong number of elements.
    LlamaRef(const Config& cfg, const Weights& weights, Numerics mode = Numerics::MkDsl);
    ~LlamaRef();
    LlamaRef(LlamaRef&&) noexcept;
    LlamaRef& operator=(LlamaRef&&) noexcept;

    /// One decode step: embeds `token`, runs every layer at position `pos` (writing k and v of this
    /// position into the cache; positions 0 .. pos - 1 must have been filled by earlier steps) and
    /// returns the f32 logits [vocab]. Throws std::out_of_range on a bad token or position.
    std::vector<float> step(int token, int pos);

    /// Zeroes the KV cache.
    void reset();

    const Config& config() const;
    Numerics numerics() const;

    struct Impl;  // the model in one scalar type (float, or double for F64); llama_ref.cpp

private:
    std::unique_ptr<Impl> impl_;
};

/// argmax with the first index of the maximum (torch.argmax's tie rule).
int argmax(const std::vector<float>& v);

/// Relative L2 error ||a - b|| / ||b|| (in double).
double rel_l2(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace mkref
