"""A small gpt-fast-style Llama decoder in plain PyTorch: the PyTorch baseline of scripts/bench.py.

Self-contained: torch and safetensors only (no transformers). Batch 1, one token per step, static
shapes everywhere, so the same `decode_step` (and `prefill`, below) runs
  - eagerly,
  - under torch.compile(model.decode_step, mode="max-autotune-no-cudagraphs", fullgraph=True,
    dynamic=False),
  - inside a torch.cuda.graph capture (eager or compiled): the step reads its token and position
    from tensors, so a replay only needs `token.copy_(...)`, `pos.copy_(...)` into the captured
    input tensors first. Nothing in the step turns a tensor into a Python value (no host sync).

Configuration: a dict with the names of the mkdsl kernel metadata's `config_values` (hidden, layers,
heads, kv_heads, head_dim, ffn, vocab, rms_eps, rope_theta, rope_factor, rope_low_freq,
rope_high_freq, rope_orig_ctx); extra keys (max_seq, tuning values) are ignored. The weight
folder's config.json is NOT read: bench.py builds the folder from those same values
(scripts/gpu_parity.py's make_config maps them to a transformers LlamaConfig: hidden_size, ...,
rope_parameters/rope_scaling llama3 when rope_factor != 1), so the kernel's metadata is the one
source of the shapes for both sides.

Weights: a Hugging Face LlamaForCausalLM safetensors folder (one model.safetensors, or shards listed
in model.safetensors.index.json), loaded straight onto the device in bf16. q/k/v are concatenated
into one [(heads + 2 kv_heads) * head_dim, hidden] weight and gate/up into one [2 ffn, hidden]
weight (one matmul each, as fast decoders do). LM head: lm_head.weight when the checkpoint has it,
else model.embed_tokens.weight (tied).

Numerics follow transformers' LlamaForCausalLM in bf16: RMSNorm in float32 (x.float(), mean of
squares, rsqrt(var + eps)) then weight * x.to(bf16); RoPE with the rotate_half convention, inverse
frequencies computed as transformers' _compute_default_rope_parameters / _compute_llama3_parameters
do (float32), cos/sin computed in float32 and rounded to bf16 (as transformers does for a bf16 model),
precomputed as a [max_len, head_dim] table indexed by the position tensor; residuals, q/k/v, the
rotation and the MLP in bf16; logits in bf16 then .float(). Attention differs on purpose: one
torch.nn.functional.scaled_dot_product_attention over the whole static cache (its kernels keep the
scores and probabilities in higher precision than transformers' eager bf16 path), with the boolean
mask `arange(max_len) <= pos`.

KV cache: per layer k_cache, v_cache [1, kv_heads, max_len, head_dim] bf16, preallocated by
setup_cache(max_len); the step writes position `pos` with an index_put_ (`k_cache[:, :, pos] = k`)
and attends over all max_len positions, the ones after pos masked out: the work of a step depends
on max_len, not on pos (as in gpt-fast).

    m = TorchLlama.from_safetensors(folder, config_values, device="cuda")
    m.setup_cache(max_len)
    m.fill_cache_random(c)               # timing only: positions 0 .. c-1 hold random values
    tok = torch.tensor([[t]], device="cuda"); pos = torch.tensor([c], device="cuda")
    logits = m.decode_step(tok, pos)     # float32 [1, vocab]

Prefill (bench.py's prefill rows): `prefill(tokens)` with tokens [1, P] runs the P prompt tokens at
positions 0 .. P-1 as one forward (every matmul over P rows; SDPA with is_causal over the prompt's
own k/v), writes them into the cache (positions 0 .. P-1; max_len >= P) and returns the last
position's logits [1, vocab]: the work before the first generated token.
"""
import json
import math
import os

import torch
import torch.nn.functional as F

CONFIG_KEYS = ("hidden", "layers", "heads", "kv_heads", "head_dim", "ffn", "vocab", "rms_eps", "rope_theta",
               "rope_factor", "rope_low_freq", "rope_high_freq", "rope_orig_ctx")


# ----------------------------------------------------------------------------------------------
# Pieces (transformers' numerics)

def rms_norm(x, weight, eps):
    """transformers' LlamaRMSNorm: float32 statistics, the normalised value rounded back to x's
    dtype, then multiplied by the weight (in the weight's dtype)."""
    h = x.float()
    var = h.pow(2).mean(-1, keepdim=True)
    h = h * torch.rsqrt(var + eps)
    return weight * h.to(x.dtype)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def rope_inv_freq(cfg):
    """Inverse frequencies, float32, on the CPU: transformers' _compute_default_rope_parameters and,
    when rope_factor != 1, _compute_llama3_parameters (the same operations in the same order)."""
    d = int(cfg["head_dim"])
    base = float(cfg["rope_theta"])
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64).to(dtype=torch.float) / d))
    factor = float(cfg.get("rope_factor", 1.0))
    if factor == 1.0:
        return inv_freq
    low_freq_factor = float(cfg["rope_low_freq"])
    high_freq_factor = float(cfg["rope_high_freq"])
    old_context_len = float(cfg["rope_orig_ctx"])
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)


def rope_table(inv_freq, max_len, device, dtype):
    """cos and sin [max_len, head_dim]: float32 angles pos * inv_freq (transformers: a K=1 float32
    matmul, the same single products), duplicated as cat(freqs, freqs), cos/sin in float32, then
    rounded to the model's dtype."""
    inv = inv_freq.to(device=device, dtype=torch.float32)
    pos = torch.arange(max_len, device=device, dtype=torch.int64).float()
    freqs = pos[:, None] * inv[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


# ----------------------------------------------------------------------------------------------
# Weights

class _Checkpoint:
    """The tensors of a safetensors folder (single file or sharded with an index), read on demand."""

    def __init__(self, folder, device):
        from safetensors import safe_open
        index = os.path.join(folder, "model.safetensors.index.json")
        if os.path.exists(index):
            wmap = json.load(open(index))["weight_map"]
            files = sorted(set(wmap.values()))
        else:
            files = ["model.safetensors"]
            wmap = None
        self.handles, self.where, self.on_device = {}, {}, True
        for f in files:
            path = os.path.join(folder, f)
            try:
                h = safe_open(path, framework="pt", device=str(device))
            except Exception:  # noqa: BLE001 - an older safetensors: read to the CPU, move after
                h = safe_open(path, framework="pt", device="cpu")
                self.on_device = False
            self.handles[f] = h
            for k in h.keys():
                self.where[k] = f
        if wmap is not None:
            missing = [k for k in wmap if k not in self.where]
            if missing:
                raise RuntimeError(f"{folder}: the index names tensors its files lack: {missing[:5]}")
        self.device = device

    def __contains__(self, name):
        return name in self.where

    def get(self, name, dtype):
        if name not in self.where:
            raise KeyError(f"the checkpoint has no tensor {name}")
        t = self.handles[self.where[name]].get_tensor(name)
        return t.to(device=self.device, dtype=dtype)

    def close(self):
        for h in self.handles.values():
            try:
                h.__exit__(None, None, None)
            except Exception:  # noqa: BLE001
                pass
        self.handles = {}


def _check_shape(name, t, shape):
    if tuple(t.shape) != tuple(shape):
        raise RuntimeError(f"{name}: shape {tuple(t.shape)}, expected {tuple(shape)} from the config")


# ----------------------------------------------------------------------------------------------
# The model

class Layer(torch.nn.Module):
    def __init__(self, cfg, w):
        super().__init__()
        self.nh, self.nkv, self.hd = int(cfg["heads"]), int(cfg["kv_heads"]), int(cfg["head_dim"])
        self.ffn = int(cfg["ffn"])
        self.eps = float(cfg["rms_eps"])
        for k, v in w.items():
            self.register_buffer(k, v, persistent=False)
        self.register_buffer("k_cache", None, persistent=False)
        self.register_buffer("v_cache", None, persistent=False)
        self.sdpa_gqa = False  # set by TorchLlama.setup_cache

    def forward(self, x, cos, sin, mask, pos):
        nh, nkv, hd = self.nh, self.nkv, self.hd
        h = rms_norm(x, self.attn_norm, self.eps)
        qkv = F.linear(h, self.wqkv)                                  # [1, 1, (nh + 2 nkv) hd]
        q, k, v = qkv.split([nh * hd, nkv * hd, nkv * hd], dim=-1)
        q = q.view(1, 1, nh, hd).transpose(1, 2)                      # [1, nh, 1, hd]
        k = k.view(1, 1, nkv, hd).transpose(1, 2)                     # [1, nkv, 1, hd]
        v = v.view(1, 1, nkv, hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        # The cache write at the position tensor (an index_put_ on device: no host value of pos).
        self.k_cache[:, :, pos] = k
        self.v_cache[:, :, pos] = v
        y = self._attend(q, self.k_cache, self.v_cache, attn_mask=mask)
        return self._out(x, y)

    def prefill(self, x, cos, sin):
        """x [1, P, hidden] at positions 0 .. P-1 (cos/sin [1, 1, P, head_dim]): writes positions
        0 .. P-1 of the cache and attends causally over the prompt's own k/v (the same values as
        the cache's first P positions, without reading them back)."""
        nh, nkv, hd = self.nh, self.nkv, self.hd
        P = x.shape[1]
        h = rms_norm(x, self.attn_norm, self.eps)
        qkv = F.linear(h, self.wqkv)                                  # [1, P, (nh + 2 nkv) hd]
        q, k, v = qkv.split([nh * hd, nkv * hd, nkv * hd], dim=-1)
        q = q.view(1, P, nh, hd).transpose(1, 2)                      # [1, nh, P, hd]
        k = k.view(1, P, nkv, hd).transpose(1, 2)                     # [1, nkv, P, hd]
        v = v.view(1, P, nkv, hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        self.k_cache[:, :, :P] = k
        self.v_cache[:, :, :P] = v
        y = self._attend(q, k, v, is_causal=True)
        return self._out(x, y)

    def _attend(self, q, k, v, **kw):
        """SDPA of q [1, nh, T, hd] over k/v [1, nkv, L, hd]: enable_gqa, or the kv heads repeated."""
        nh, nkv, hd = self.nh, self.nkv, self.hd
        if nh != nkv and self.sdpa_gqa:
            return F.scaled_dot_product_attention(q, k, v, enable_gqa=True, **kw)
        if nh != nkv:  # repeat_interleave of the kv heads along dim 1, as expand + reshape
            g, L = nh // nkv, k.shape[2]
            k = k.unsqueeze(2).expand(1, nkv, g, L, hd).reshape(1, nh, L, hd)
            v = v.unsqueeze(2).expand(1, nkv, g, L, hd).reshape(1, nh, L, hd)
        return F.scaled_dot_product_attention(q, k, v, **kw)

    def _out(self, x, y):
        """o projection + residual, then the MLP + residual; y [1, nh, T, hd] -> [1, T, hidden]."""
        T = y.shape[2]
        y = y.transpose(1, 2).reshape(1, T, self.nh * self.hd)
        x = x + F.linear(y, self.wo)
        h = rms_norm(x, self.ffn_norm, self.eps)
        gate, up = F.linear(h, self.w_gate_up).split([self.ffn, self.ffn], dim=-1)
        return x + F.linear(F.silu(gate) * up, self.w_down)


class TorchLlama(torch.nn.Module):
    """Llama decoder, batch 1, one token per step, static KV cache. See the module docstring."""

    def __init__(self, cfg, weights, device="cuda", dtype=torch.bfloat16, gqa="auto"):
        """cfg: config_values (CONFIG_KEYS); weights: {"embed", "norm", "lm_head", "layers": [{"attn_norm",
        "wqkv", "wo", "ffn_norm", "w_gate_up", "w_down"}]} already on `device` in `dtype`.
        gqa: "auto" (SDPA's enable_gqa=True when this torch has it, else repeat the kv heads),
        "sdpa" or "repeat"."""
        super().__init__()
        missing = [k for k in CONFIG_KEYS if k not in cfg]
        if missing:
            raise ValueError(f"config lacks {missing}")
        self.cfg = {k: cfg[k] for k in CONFIG_KEYS}
        self.device = torch.device(device)
        self.dtype = dtype
        self.gqa = gqa
        self.hd = int(cfg["head_dim"])
        self.vocab = int(cfg["vocab"])
        self.eps = float(cfg["rms_eps"])
        self.register_buffer("embed", weights["embed"], persistent=False)
        self.register_buffer("norm", weights["norm"], persistent=False)
        self.register_buffer("lm_head", weights["lm_head"], persistent=False)
        self.layers = torch.nn.ModuleList(Layer(cfg, w) for w in weights["layers"])
        self.inv_freq = rope_inv_freq(cfg)  # float32, CPU (compared with transformers' by bench.py)
        self.register_buffer("rope_cos", None, persistent=False)
        self.register_buffer("rope_sin", None, persistent=False)
        self.register_buffer("cache_positions", None, persistent=False)
        self.max_len = 0
        self.sdpa_gqa = False
        self.tied_lm_head = weights["lm_head"] is weights["embed"]

    # -- loading ------------------------------------------------------------------------------
    @classmethod
    def from_safetensors(cls, folder, cfg, device="cuda", dtype=torch.bfloat16, gqa="auto"):
        """Loads a Hugging Face LlamaForCausalLM safetensors folder; fuses q/k/v and gate/up.
        Peak memory: the model plus one layer's unfused q/k/v or gate/up."""
        device = torch.device(device)
        H, L = int(cfg["hidden"]), int(cfg["layers"])
        nh, nkv, hd, ffn, V = (int(cfg[k]) for k in ("heads", "kv_heads", "head_dim", "ffn", "vocab"))
        ck = _Checkpoint(folder, device)
        try:
            def get(name, shape):
                t = ck.get(name, dtype)
                _check_shape(name, t, shape)
                return t

            w = dict(embed=get("model.embed_tokens.weight", (V, H)), norm=get("model.norm.weight", (H,)))
            if "lm_head.weight" in ck:
                w["lm_head"] = get("lm_head.weight", (V, H))
                w["tied_lm_head"] = False
            else:
                w["lm_head"] = w["embed"]
                w["tied_lm_head"] = True
            layers = []
            for i in range(L):
                p = f"model.layers.{i}."
                q = get(p + "self_attn.q_proj.weight", (nh * hd, H))
                k = get(p + "self_attn.k_proj.weight", (nkv * hd, H))
                v = get(p + "self_attn.v_proj.weight", (nkv * hd, H))
                wqkv = torch.cat([q, k, v], dim=0)
                del q, k, v
                g = get(p + "mlp.gate_proj.weight", (ffn, H))
                u = get(p + "mlp.up_proj.weight", (ffn, H))
                w_gate_up = torch.cat([g, u], dim=0)
                del g, u
                layers.append(dict(attn_norm=get(p + "input_layernorm.weight", (H,)), wqkv=wqkv,
                                   wo=get(p + "self_attn.o_proj.weight", (H, nh * hd)),
                                   ffn_norm=get(p + "post_attention_layernorm.weight", (H,)),
                                   w_gate_up=w_gate_up, w_down=get(p + "mlp.down_proj.weight", (H, ffn))))
            w["layers"] = layers
        finally:
            ck.close()
        w.pop("tied_lm_head")
        return cls(cfg, w, device=device, dtype=dtype, gqa=gqa)

    def weight_bytes(self):
        seen, n = set(), 0
        for t in [self.embed, self.norm, self.lm_head] + [b for l in self.layers for k, b in l.named_buffers()
                                                           if not k.endswith("_cache")]:
            if t.data_ptr() not in seen:
                seen.add(t.data_ptr())
                n += t.numel() * t.element_size()
        return n

    # -- the static cache ----------------------------------------------------------------------
    def _probe_sdpa_gqa(self):
        """Whether this torch's SDPA takes enable_gqa=True for the step's shapes, dtype and mask."""
        nh, nkv, hd = int(self.cfg["heads"]), int(self.cfg["kv_heads"]), self.hd
        if nh == nkv:
            return False
        try:
            q = torch.zeros(1, nh, 1, hd, device=self.device, dtype=self.dtype)
            k = torch.zeros(1, nkv, 16, hd, device=self.device, dtype=self.dtype)
            m = torch.ones(1, 1, 1, 16, device=self.device, dtype=torch.bool)
            y = F.scaled_dot_product_attention(q, k, k, attn_mask=m, enable_gqa=True)
            return tuple(y.shape) == (1, nh, 1, hd)
        except (TypeError, RuntimeError, NotImplementedError):
            return False

    def set_gqa(self, gqa):
        """How attention meets the kv heads: "auto" (SDPA's enable_gqa=True when this torch takes it
        for the step's shapes, else repeated kv heads), "sdpa" or "repeat"."""
        if gqa not in ("auto", "sdpa", "repeat"):
            raise ValueError(f"gqa {gqa!r}")
        self.gqa = gqa
        self.sdpa_gqa = self._probe_sdpa_gqa() if gqa == "auto" else gqa == "sdpa"
        for l in self.layers:
            l.sdpa_gqa = self.sdpa_gqa

    def setup_cache(self, max_len):
        """(Re)allocates the KV cache for positions 0 .. max_len - 1 (zeros), the RoPE table and the
        positions the mask compares with. Frees the previous cache first."""
        max_len = int(max_len)
        for l in self.layers:
            l.k_cache = None
            l.v_cache = None
        self.set_gqa(self.gqa)
        shape = (1, int(self.cfg["kv_heads"]), max_len, self.hd)
        for l in self.layers:
            l.k_cache = torch.zeros(shape, device=self.device, dtype=self.dtype)
            l.v_cache = torch.zeros(shape, device=self.device, dtype=self.dtype)
        self.rope_cos, self.rope_sin = rope_table(self.inv_freq, max_len, self.device, self.dtype)
        self.cache_positions = torch.arange(max_len, device=self.device, dtype=torch.int64)
        self.max_len = max_len

    def reset_cache(self):
        for l in self.layers:
            l.k_cache.zero_()
            l.v_cache.zero_()

    def fill_cache_random(self, n, seed=0, std=1.0):
        """FOR TIMING ONLY: makes positions 0 .. n-1 of every layer's cache hold random normal values
        (std `std`) and the rest zeros, instead of running a prefill of n tokens. A decode step at
        position n does the same work whatever the cache holds (the same kernels over the same shapes;
        the mask, not the contents, selects positions 0 .. n), so its time is that of a step after a
        real n-token prompt. The logits it produces are meaningless."""
        n = int(n)
        if not 0 <= n < self.max_len:
            raise ValueError(f"fill of {n} positions: the cache holds {self.max_len} (position n must fit)")
        g = torch.Generator(device=self.device).manual_seed(seed)
        for l in self.layers:
            for c in (l.k_cache, l.v_cache):
                c.normal_(0.0, std, generator=g)
                c[:, :, n:].zero_()

    # -- the step --------------------------------------------------------------------------------
    def decode_step(self, token, pos):
        """token: int64 [1, 1]; pos: int64 [1] (on the device, pos < max_len). Writes position pos of
        every layer's cache and returns the float32 logits [1, vocab] of the token at pos."""
        hd = self.hd
        x = F.embedding(token, self.embed)                                  # [1, 1, hidden]
        cos = self.rope_cos.index_select(0, pos).view(1, 1, 1, hd)
        sin = self.rope_sin.index_select(0, pos).view(1, 1, 1, hd)
        mask = (self.cache_positions <= pos).view(1, 1, 1, self.max_len)    # True: attend
        for layer in self.layers:
            x = layer(x, cos, sin, mask, pos)
        x = rms_norm(x, self.norm, self.eps)
        return F.linear(x, self.lm_head).float().view(1, self.vocab)

    def prefill(self, tokens):
        """tokens: int64 [1, P] on the device (P <= max_len), the prompt at positions 0 .. P-1 from an
        empty cache. One forward over the P tokens (causal attention over the prompt itself, SDPA's
        is_causal), writing positions 0 .. P-1 of every layer's cache; returns the float32 logits
        [1, vocab] of the last position only (the LM head runs on that row alone: what a time to
        first token needs). Static shapes for a given P (no host sync), so torch.compile(...,
        dynamic=False) and a CUDA graph capture work as for decode_step."""
        hd, P = self.hd, tokens.shape[1]
        x = F.embedding(tokens, self.embed)                                 # [1, P, hidden]
        cos = self.rope_cos[:P].view(1, 1, P, hd)
        sin = self.rope_sin[:P].view(1, 1, P, hd)
        for layer in self.layers:
            x = layer.prefill(x, cos, sin)
        x = rms_norm(x[:, -1:], self.norm, self.eps)
        return F.linear(x, self.lm_head).float().view(1, self.vocab)

    def forward(self, token, pos):
        return self.decode_step(token, pos)
