// std.attention: one-pass GQA decode attention (a runtime-bounded loop over cache chunks).
import std.embed;
import std.rope;
import std.attention;

config small {
    vocab = 32;
    hidden = 64;
    heads = 4;
    kv_heads = 2;
    head_dim = 16;
    max_seq = 64;
}

weight table: bf16[vocab, hidden] = "model.embed_tokens.weight";
weight norm: bf16[hidden] = "model.layers.0.input_layernorm.weight";
weight qkv: bf16[(heads + 2 * kv_heads) * head_dim, hidden] tiled(8, 64) = [
    "model.layers.0.self_attn.q_proj.weight",
    "model.layers.0.self_attn.k_proj.weight",
    "model.layers.0.self_attn.v_proj.weight",
];
state k_cache: bf16[kv_heads, max_seq, head_dim];
state v_cache: bf16[kv_heads, max_seq, head_dim];

step decode(token: i32, pos: i32) -> (o: bf16[heads * head_dim]) {
    let x = embed(table, token, C = 64);
    let q = qkv_rope_append(qkv, norm, x, pos, k_cache, v_cache);
    let o = attention_decode(q, k_cache, v_cache, pos, C = 16);
    return (o);
}
