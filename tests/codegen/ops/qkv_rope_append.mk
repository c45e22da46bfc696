// std.rope: fused RMSNorm + QKV projection + RoPE (llama3 scaling on) + KV-cache append
// (stores into state at a runtime position).
import std.embed;
import std.rope;

config small {
    vocab = 32;
    hidden = 64;
    heads = 4;
    kv_heads = 2;
    head_dim = 16;
    max_seq = 32;
}

weight table: bf16[vocab, hidden] = "model.embed_tokens.weight";
weight norm: bf16[hidden] = "model.layers.0.input_layernorm.weight";
weight qkv: bf16[(heads + 2 * kv_heads) * head_dim, hidden] tiled(8, 32) = [
    "model.layers.0.self_attn.q_proj.weight",
    "model.layers.0.self_attn.k_proj.weight",
    "model.layers.0.self_attn.v_proj.weight",
];
state k_cache: bf16[kv_heads, max_seq, head_dim];
state v_cache: bf16[kv_heads, max_seq, head_dim];

step decode(token: i32, pos: i32) -> (q: bf16[heads * head_dim]) {
    let x = embed(table, token, C = 64);
    let q = qkv_rope_append(qkv, norm, x, pos, k_cache, v_cache, theta = 500000.0,
        rope_factor = 32.0, rope_low = 1.0, rope_high = 4.0, rope_orig = 8192.0);
    return (q);
}
