"""The random initialisation of the Hugging Face reference models (scripts/make_hf_golden.py,
scripts/gpu_parity.py, scripts/bench.py): one place for the standard deviations.

Normal std per parameter kind, chosen for the tiny config (hidden 64); norms are
1 + NORM_STD * randn. Larger than transformers' 0.02: with hidden states of norm ~1 this gives
attention scores with std ~1.4 (a peaked softmax) and logits with std ~1.5.
"""
INIT_STD = {
    "embed_tokens": 1.0,
    "q_proj": 0.15,
    "k_proj": 0.15,
    "v_proj": 0.1,
    "o_proj": 0.1,
    "gate_proj": 0.1,
    "up_proj": 0.1,
    "down_proj": 0.1,
    "lm_head": 0.2,
}
NORM_STD = 0.1
