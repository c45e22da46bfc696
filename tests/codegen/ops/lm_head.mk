// std.sampling: final RMSNorm fused into the LM head with argmax partials, then argmax_final
// (f32 and i32 results).
import std.embed;
import std.sampling;

config small {
    vocab = 256;
    hidden = 64;
}

weight table: bf16[vocab, hidden] = "model.embed_tokens.weight";
weight norm: bf16[hidden] = "model.norm.weight";
weight lm_head: bf16[vocab, hidden] tiled(16, 64) = "lm_head.weight";

step decode(token: i32) -> (logits: f32[vocab], next: i32) {
    let x = embed(table, token, C = 64);
    let (lg, part_max, part_idx) = rmsnorm_lm_head_argmax(lm_head, norm, x);
    let nx = argmax_final(part_max, part_idx);
    return (lg, nx);
}
