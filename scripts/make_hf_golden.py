#!/usr/bin/env python3
"""Make the Hugging Face golden files in tests/data for the tiny Llama of examples/llama_tiny.mk.

Run on a machine with torch, transformers, safetensors and numpy (a CUDA GPU is used when there is
one; no network needed):

    python3 scripts/make_hf_golden.py --out tests/data

What it does:
  1. Reads the model config from examples/llama_tiny.mk (vocab, hidden, layers, heads, kv_heads,
     head_dim, ffn, rope_theta, rms_eps, max_seq) and builds a transformers LlamaConfig from it
     (tie_word_embeddings False, so the checkpoint has its own lm_head.weight; eager attention).
  2. Builds LlamaForCausalLM and re-initialises every parameter from a CPU generator seeded with 0,
     larger than transformers' default (see INIT_STD) so the attention is far from uniform and the
     logits are far from zero; rounds the weights to bf16 and saves the model with save_pretrained.
  3. Reloads it the way a user does (from_pretrained, dtype bfloat16, attn_implementation "eager"),
     and feeds a fixed sequence of STEPS tokens (CPU generator seeded with 1) one token at a time
     with a KV cache (use_cache=True, past_key_values fed back): teacher-forced decode.
  4. Does the same with the model loaded in float32 (TF32 off) as a sanity reference.

Outputs (all small):
  tiny_llama.safetensors         the bf16 weights, Hugging Face names
  tiny_llama_tokens.txt          the token ids, comma-separated
  tiny_llama_logits.npy          float32 [STEPS, vocab]: bf16 model's logits of every step
  tiny_llama_logits_f32.npy      float32 [STEPS, vocab]: same weights, float32 model
  tiny_llama_hidden.npy          float32 [STEPS, layers + 1, hidden]: bf16 model's hidden_states
  tiny_llama_hidden_f32.npy      float32 [STEPS, layers + 1, hidden]: float32 model's hidden_states
  tiny_llama_meta.json           config, init, tokens, library versions, device, checks, sha256s
hidden_states are transformers' `output_hidden_states` for the step's token: entry 0 is the
embedding, entry i (1 <= i < layers) the output of layer i - 1, and the last entry the output of
the final RMSNorm (transformers' convention).
"""
import argparse
import datetime
import hashlib
import json
import os
import platform
import re
import shutil
import sys
import tempfile

import numpy as np
import torch
import safetensors
import safetensors.torch
import transformers
from transformers import LlamaConfig, LlamaForCausalLM

STEPS = 24
WEIGHT_SEED = 0
TOKEN_SEED = 1
from hf_init import INIT_STD, NORM_STD  # noqa: E402 (scripts/ is on sys.path when run)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MK_FILE = os.path.join(REPO, "examples", "llama_tiny.mk")


def read_mk_config(path):
    """The `name = value;` lines of the first `config` block of a .mk file."""
    text = open(path).read()
    m = re.search(r"config\s+\w+\s*\{(.*?)\n\}", text, re.S)
    if not m:
        sys.exit(f"no config block in {path}")
    vals = {}
    for name, value in re.findall(r"^\s*(\w+)\s*=\s*([^;]+);", m.group(1), re.M):
        vals[name] = float(value) if re.search(r"[.eE]", value) else int(value)
    return vals


def load_model(path, dtype):
    # transformers >= 4.56 (and 5.x) take `dtype`; older ones `torch_dtype`.
    for key in ("dtype", "torch_dtype"):
        try:
            model = LlamaForCausalLM.from_pretrained(path, attn_implementation="eager", **{key: dtype})
        except TypeError:
            continue
        if next(model.parameters()).dtype == dtype:
            return model
    sys.exit(f"could not load the model in {dtype}")


def rope_theta_of(model):
    rot = model.model.rotary_emb
    if not hasattr(rot, "inv_freq"):
        sys.exit(f"no inv_freq buffer in {type(rot).__name__}: {[n for n, _ in rot.named_buffers()]}")
    inv = rot.inv_freq.double().cpu()
    d = 2 * inv.numel()
    # inv_freq[1] = theta^(-2/d)
    return float(inv[1] ** (-d / 2.0)), rot


def make_config(mk):
    base = dict(
        vocab_size=mk["vocab"],
        hidden_size=mk["hidden"],
        num_hidden_layers=mk["layers"],
        num_attention_heads=mk["heads"],
        num_key_value_heads=mk["kv_heads"],
        head_dim=mk["head_dim"],
        intermediate_size=mk["ffn"],
        rms_norm_eps=mk["rms_eps"],
        max_position_embeddings=mk["max_seq"],
        tie_word_embeddings=False,
        hidden_act="silu",
        attention_bias=False,
        mlp_bias=False,
        initializer_range=0.02,
        attn_implementation="eager",
    )
    theta = float(mk["rope_theta"])
    if float(mk.get("rope_factor", 1.0)) != 1.0:
        sys.exit("this script handles rope_factor = 1.0 (no llama3 scaling) only")
    # transformers 4.x: rope_theta; 5.x: rope_parameters (rope_theta still accepted by some).
    candidates = [
        dict(rope_theta=theta),
        dict(rope_parameters={"rope_type": "default", "rope_theta": theta}),
    ]
    for extra in candidates:
        try:
            cfg = LlamaConfig(**base, **extra)
        except TypeError:
            continue
        rp = getattr(cfg, "rope_parameters", None)
        if isinstance(rp, dict):
            rp["rope_theta"] = theta
            rp.setdefault("rope_type", "default")
        if getattr(cfg, "rope_theta", None) is not None:
            cfg.rope_theta = theta
        cfg._attn_implementation = "eager"
        torch.manual_seed(WEIGHT_SEED)
        probe = LlamaForCausalLM(cfg)
        got, _ = rope_theta_of(probe)
        if abs(got / theta - 1.0) < 1e-4:
            return cfg, probe
        print(f"config candidate {list(extra)} gave rope_theta {got}, want {theta}; trying next")
    sys.exit("could not make a LlamaConfig with the wanted rope_theta")


def reinit(model):
    gen = torch.Generator().manual_seed(WEIGHT_SEED)
    stds = {}
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            if name.endswith("norm.weight"):
                p.copy_(1.0 + NORM_STD * torch.randn(p.shape, generator=gen))
                stds[name] = f"1 + {NORM_STD} * randn"
                continue
            kind = [k for k in INIT_STD if f"{k}.weight" in name]
            if len(kind) != 1:
                sys.exit(f"unexpected parameter {name}")
            p.copy_(INIT_STD[kind[0]] * torch.randn(p.shape, generator=gen))
            stds[name] = INIT_STD[kind[0]]
    return stds


def decode(model, tokens, device):
    """Teacher-forced decode, one token per forward, KV cache fed back."""
    logits, hidden = [], []
    past = None
    with torch.no_grad():
        for t in tokens:
            ids = torch.tensor([[t]], dtype=torch.long, device=device)
            out = model(input_ids=ids, past_key_values=past, use_cache=True, output_hidden_states=True)
            past = out.past_key_values
            logits.append(out.logits[0, -1].float().cpu())
            hs = out.hidden_states or ()
            hidden.append(torch.stack([h[0, -1].float().cpu() for h in hs]) if hs
                          else torch.zeros(0, model.config.hidden_size))
        full = model(input_ids=torch.tensor([tokens], dtype=torch.long, device=device),
                     use_cache=False).logits[0].float().cpu()
    logits = torch.stack(logits)
    return logits.numpy(), torch.stack(hidden).numpy(), out.logits.dtype, full.numpy(), type(past).__name__


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="output folder")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    device = "cuda" if torch.cuda.is_available() else "cpu"
    # f32 matmuls in full f32 (no TF32: the default) and bf16 matmuls reduced in f32.
    flags = {}
    for name, fn in (("float32_matmul_precision", lambda: torch.set_float32_matmul_precision("highest")),
                     ("allow_bf16_reduced_precision_reduction", lambda: setattr(
                         torch.backends.cuda.matmul, "allow_bf16_reduced_precision_reduction", False))):
        try:
            fn()
            flags[name] = "set"
        except Exception as e:  # noqa: BLE001 - record and go on
            flags[name] = f"not set: {e}"
    try:
        flags["float32_matmul_precision"] = torch.get_float32_matmul_precision()
        flags["allow_bf16_reduced_precision_reduction"] = \
            torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction
    except Exception:  # noqa: BLE001
        pass

    mk = read_mk_config(MK_FILE)
    print("config from", MK_FILE, mk)
    cfg, model = make_config(mk)
    stds = reinit(model)

    tmp = tempfile.mkdtemp(prefix="tiny_llama_")
    model.to(torch.bfloat16).save_pretrained(tmp)
    saved = safetensors.torch.load_file(os.path.join(tmp, "model.safetensors"))

    gen = torch.Generator().manual_seed(TOKEN_SEED)
    tokens = torch.randint(0, mk["vocab"], (STEPS,), generator=gen).tolist()

    results = {}
    for tag, dtype in (("bf16", torch.bfloat16), ("f32", torch.float32)):
        m = load_model(tmp, dtype).to(device).eval()
        assert m.config._attn_implementation == "eager", m.config._attn_implementation
        theta, rot = rope_theta_of(m)
        sd = m.state_dict()
        for k, v in saved.items():  # the loaded weights are exactly the saved bf16 values
            assert torch.equal(sd[k].cpu().to(torch.bfloat16), v), k
            assert torch.equal(sd[k].cpu().float(), v.float()), k
        if tag == "bf16":
            weights = {k: v.contiguous() for k, v in sd.items() if k in saved}
            assert set(weights) == set(saved)
            assert "lm_head.weight" in weights
        logits, hidden, out_dtype, full, cache_type = decode(m, tokens, device)
        results[tag] = dict(logits=logits, hidden=hidden, out_dtype=str(out_dtype),
                            inv_freq_dtype=str(rot.inv_freq.dtype), rope_theta=theta,
                            cache=cache_type,
                            cached_vs_full_max_abs=float(np.abs(logits - full).max()))
        del m

    st_path = os.path.join(args.out, "tiny_llama.safetensors")
    safetensors.torch.save_file({k: v.cpu() for k, v in sorted(weights.items())}, st_path,
                                metadata={"format": "pt"})
    tok_path = os.path.join(args.out, "tiny_llama_tokens.txt")
    with open(tok_path, "w") as f:
        f.write(",".join(str(t) for t in tokens) + "\n")
    files = {"safetensors": st_path, "tokens": tok_path}
    for tag, suffix in (("bf16", ""), ("f32", "_f32")):
        p = os.path.join(args.out, f"tiny_llama_logits{suffix}.npy")
        np.save(p, results[tag]["logits"].astype(np.float32))
        files[f"logits{suffix}"] = p
        p = os.path.join(args.out, f"tiny_llama_hidden{suffix}.npy")
        np.save(p, results[tag]["hidden"].astype(np.float32))
        files[f"hidden{suffix}"] = p

    a, b = results["bf16"]["logits"], results["f32"]["logits"]
    rel = [float(np.linalg.norm(a[i] - b[i]) / np.linalg.norm(b[i])) for i in range(STEPS)]
    agree = int((a.argmax(1) == b.argmax(1)).sum())
    meta = {
        "made_by": "scripts/make_hf_golden.py --out " + args.out,
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "mk_file": "examples/llama_tiny.mk",
        "mk_config": mk,
        "hf_config": json.loads(cfg.to_json_string()),
        "steps": STEPS,
        "tokens": tokens,
        "token_seed": TOKEN_SEED,
        "weight_seed": WEIGHT_SEED,
        "init_std": INIT_STD,
        "norm_init": f"1 + {NORM_STD} * randn",
        "init_note": "every parameter drawn in sorted-name order from torch.Generator().manual_seed(0) "
                     "in float32, then rounded to bf16 (model.to(bfloat16).save_pretrained)",
        "decode": "teacher-forced, one token per forward, use_cache=True with past_key_values fed back, "
                  "attn_implementation eager, torch.no_grad",
        "torch_flags": flags,
        "runs": {tag: {k: v for k, v in r.items() if k not in ("logits", "hidden")}
                 for tag, r in results.items()},
        "bf16_vs_f32": {"rel_l2_per_step": rel, "argmax_agree": agree},
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "torch_cuda": torch.version.cuda,
            "transformers": transformers.__version__,
            "safetensors": safetensors.__version__,
            "numpy": np.__version__,
        },
        "device": torch.cuda.get_device_name(0) if device == "cuda" else platform.processor() or "cpu",
        "files": {k: {"name": os.path.basename(p), "sha256": sha256(p), "bytes": os.path.getsize(p)}
                  for k, p in files.items()},
    }
    with open(os.path.join(args.out, "tiny_llama_meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps({k: meta[k] for k in ("versions", "device", "runs", "bf16_vs_f32", "tokens")},
                     indent=1))
    print("logits[0][:8] bf16", a[0][:8].tolist())
    print("logits[0][:8] f32 ", b[0][:8].tolist())


if __name__ == "__main__":
    main()
