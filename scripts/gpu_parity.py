#!/usr/bin/env python3
"""GPU parity of an mkdsl megakernel against Hugging Face transformers (issues 5 and 16).

Runs on the GPU machine (torch, transformers, safetensors, numpy; no network). Two modes.

Model mode (the default), for one `mkdsl build` output of any .mk and config:

    python3 scripts/gpu_parity.py --meta build-gpu/tiny.meta.json --ptx build-gpu/tiny.ptx \\
        --mkrt build-gpu/mkrt-run --out DIR [--steps all] [--prompt 16] [--seed 0] [--init scaled]

  1. Reads the kernel metadata's "config_values" (vocab, hidden, layers, heads, kv_heads, head_dim,
     ffn, rope_*, rms_eps, max_seq) and builds a transformers LlamaConfig from them: untied LM head
     (tie_word_embeddings false, so the checkpoint has its own lm_head.weight), eager attention,
     llama3 RoPE scaling when rope_factor != 1 (rope_type llama3, factor, low_freq_factor,
     high_freq_factor, original_max_position_embeddings). transformers 5 takes these as
     `rope_parameters`, 4.x as rope_theta + rope_scaling: each form is tried and the one whose
     rotary `inv_freq` equals the formula (computed here in float64) is kept, so a reference whose
     RoPE differs from the kernel's (an error that grows with the position) cannot pass unseen.
  2. Builds LlamaForCausalLM and, with --init scaled (the default), re-initialises every parameter
     as scripts/make_hf_golden.py does (sorted parameter names, one seeded generator, normal with
     INIT_STD per kind, norm gains 1 + 0.1 randn), with each projection's std scaled by
     sqrt(tiny fan-in / fan-in) so a larger model keeps the tiny model's activation statistics
     (peaked attention, logits far from zero; for the tiny config the factor is exactly 1 and with
     --seed 0 and a CPU generator the weights are those of tests/data). --init transformers keeps
     transformers' own initialisation (std 0.02, norm gains 1). Rounds to bf16 and saves with
     save_pretrained(max_shard_size=--max-shard-size): the 1B model becomes a sharded folder with
     model.safetensors.index.json, the runtime's sharded path.
  3. Teacher-forced decode of the same `steps` random tokens (--steps all: every position of the
     KV cache, max_seq; the first `prompt` count as the prompt for the greedy check) through
       - mkrt-run --weights DIR --tokens ... --max-new 0 --dump-logits (one step per position),
       - transformers, model loaded in bfloat16 and in float32 (TF32 off) from the same bf16
         weights, the sequence fed in chunks of --ref-chunk tokens with the KV cache fed back
         (every position's logits see exactly the tokens before it); the float32 run also decodes
         the first --cache-check positions one token per forward, which must agree with it
         (REF_SELF_GATE).
  4. Compares every position: relative L2 error ||mk - ref|| / ||ref||, and the argmax rule of
     issue 5 (argmax equal wherever the reference's top-2 margin exceeds 1e-2 of its logits' range).
     GATE: rel L2 <= 1e-2 at every position and the argmax rule, against the float32 transformers
     run. The bf16 transformers run is compared and reported too, not gated: transformers' eager
     bf16 path rounds RoPE's cos/sin and products, the attention scores and the probabilities to
     bf16, and on the committed tiny goldens it is itself 1.05e-2 away from its float32 run; mkdsl
     keeps those in f32 (by design: the CPU interpreter is 8.2e-3 from float32 and 1.19e-2 from
     bf16 there).
  5. Informational (not gated, --no-greedy skips it): mkrt-run's own greedy decode from the
     prompt, checked against transformers float32 teacher-forced on mkrt's greedy sequence.
  6. With --prefill-check BIN (build-gpu/mk-prefill-check), for a kernel with a prefill_logits
     step of T tokens a chunk: the same tokens through that step in two chunkings (prefill_chunkings:
     whole chunks then the rest, and a short chunk first so that later chunks start mid-block), every
     position's logits against the same transformers float32 run with the same gate (rel L2 <= 1e-2
     and the argmax rule) and against the decode step's within twice that (two paths, each within
     the gate of the reference, are within its double of each other: prefill rounds the attention
     probabilities and the activations between its products to bf16 where decode keeps f32), then
     the decode step from the caches a prefill left. Part of the pass/fail.
  Writes DIR/parity.json (summaries, the curve in --windows windows, versions, config, pass/fail,
  the command; per-step rows for runs of at most 256 steps), DIR/parity.md (the same as tables,
  also printed) and DIR/curve.tsv.gz (every position's rel L2 and argmax flags for each
  comparison). Exit status 0 on pass, 1 on a failed gate, 2 when something could not run.

Golden mode, for the committed goldens of tests/data (needs numpy only):

    python3 scripts/gpu_parity.py --golden tests/data --cpu-logits build-gpu/tiny_cpu.npy \\
        --ptx build-gpu/tiny.ptx --mkrt build-gpu/mkrt-run --out DIR

  Runs mkrt-run on tests/data/tiny_llama.safetensors with the golden tokens and compares with
  tiny_llama_logits_f32.npy (gate: rel L2 <= 1e-2 and the argmax rule), tiny_llama_logits.npy
  (transformers bf16; gate 2e-2, the bound of the CPU end-to-end test) and the CPU interpreter's
  logits (`mkdsl run --device cpu --dump-logits`; gate 5e-3: the same weights and schedule; the
  kernel's block-wide sums run in another order than the interpreter's sequential ones, which
  the f32 activations and logits no longer hide behind bf16 rounding).
"""
import argparse
import datetime
import gzip
import hashlib
import json
import math
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import time
import traceback

import numpy as np

REL_L2_GATE = 1e-2          # issue 5, against transformers float32
ARGMAX_MARGIN = 1e-2        # issue 5: argmax checked where top-2 margin > 1e-2 of the range
GOLDEN_BF16_GATE = 2e-2     # tests/e2e's bound against the bf16 golden
# GPU kernel against the CPU interpreter of the same schedule: summation order only (the tiny
# model measured 8.7e-4; a real bug, a missing wait or a wrong tile, is orders larger).
CPU_GATE = 5e-3
# transformers float32 against itself: chunked teacher-forced forwards against one token per forward
# (float32 rounding in another order; a wrong cache or position is orders larger).
REF_SELF_GATE = 1e-4

from hf_init import INIT_STD, NORM_STD  # noqa: E402 (scripts/ is on sys.path when run)
# Fan-in (columns) of each projection in the tiny config INIT_STD was chosen for: hidden 64,
# heads * head_dim 64, ffn 128. A model with fan-in F gets std * sqrt(TINY_FAN_IN / F).
TINY_FAN_IN = {"q_proj": 64, "k_proj": 64, "v_proj": 64, "o_proj": 64, "gate_proj": 64,
               "up_proj": 64, "down_proj": 128, "lm_head": 64}

GATE_NOTE = (
    "Gate: per step, relative L2 error <= 1e-2 against transformers in float32 (same bf16 weights, "
    "TF32 off), and argmax equal wherever that run's top-2 margin exceeds 1e-2 of its logits' range. "
    "Why float32 and not transformers' own bf16 run: transformers' eager bf16 path rounds RoPE's "
    "cos/sin and products, the attention scores and the softmax probabilities to bf16, and on the "
    "committed tiny goldens (tests/data) that run is itself 1.05e-2 (worst step) away from its "
    "float32 run; mkdsl keeps RoPE, scores and probabilities in f32 (the CPU interpreter is 8.2e-3 "
    "from float32 and 1.19e-2 from bf16 on those goldens). The bf16 comparison is reported, not gated.")


def log(*a):
    print(*a, flush=True)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


def jnum(x):
    """A float for JSON: None for NaN/inf."""
    x = float(x)
    return x if math.isfinite(x) else None


# ----------------------------------------------------------------------------------------------
# Comparisons (numpy only)

def _row_stats_numpy(g, r):
    """Per-row raw numbers of float64 arrays g, r [rows, vocab]: (finite, ||g - r|| over finite
    entries, ||r||, max |g - r|, argmax g (NaN as -inf), argmax r, top-2 gap of r, range of r,
    g == r everywhere)."""
    fin_e = np.isfinite(g)
    d = np.where(fin_e, g - r, 0.0)
    top = np.partition(r, -2, axis=1)[:, -2:]
    return (fin_e.all(axis=1), np.linalg.norm(d, axis=1), np.linalg.norm(r, axis=1), np.abs(d).max(axis=1),
            np.argmax(np.where(np.isnan(g), -np.inf, g), axis=1), np.argmax(r, axis=1), top[:, 1] - top[:, 0],
            r.max(axis=1) - r.min(axis=1), (g == r).all(axis=1))


def _row_stats_torch(torch, g, r):
    """_row_stats_numpy on the GPU (float64 tensors), returned as numpy arrays."""
    fin_e = torch.isfinite(g)
    d = torch.where(fin_e, g - r, torch.zeros_like(g))
    top = torch.topk(r, 2, dim=1).values
    out = (fin_e.all(dim=1), torch.linalg.vector_norm(d, dim=1), torch.linalg.vector_norm(r, dim=1),
           d.abs().amax(dim=1), torch.argmax(torch.where(torch.isnan(g), torch.full_like(g, -math.inf), g), dim=1),
           torch.argmax(r, dim=1), top[:, 0] - top[:, 1], r.amax(dim=1) - r.amin(dim=1), (g == r).all(dim=1))
    return tuple(x.cpu().numpy() for x in out)


def _cuda_torch():
    """torch when it is importable and sees a GPU (the comparisons run there), else None."""
    try:
        import torch
        return torch if torch.cuda.is_available() else None
    except Exception:  # noqa: BLE001 - numpy does it then
        return None


def compare_rows(got, ref, margin_frac=ARGMAX_MARGIN, rows=256):
    """Per-step numbers of `got` against `ref` ([steps, vocab], numpy arrays or memory maps), as
    arrays: rel_l2, max_abs, finite, argmax, ref_argmax, ref_margin (top-2 gap of ref), ref_range,
    argmax_checked (the margin exceeds margin_frac of the range), argmax_equal, bit_identical. In
    float64, `rows` rows at a time (so [8192, 128256] logits need no float64 copy of the whole), on
    the GPU when torch sees one (numpy's pass over such logits takes minutes)."""
    if got.shape != ref.shape:
        raise ValueError(f"shape {got.shape} vs reference {ref.shape}")
    torch = _cuda_torch()
    n = ref.shape[0]
    names = ("finite", "diff", "norm", "max_abs", "argmax", "ref_argmax", "ref_margin", "ref_range", "bit_identical")
    parts = {k: [] for k in names}
    for lo in range(0, n, rows):
        g = np.ascontiguousarray(got[lo:lo + rows])
        r = np.ascontiguousarray(ref[lo:lo + rows])
        if torch is not None:  # moved as stored (float32), widened there
            stats = _row_stats_torch(torch, torch.from_numpy(g).cuda().double(), torch.from_numpy(r).cuda().double())
        else:
            stats = _row_stats_numpy(g.astype(np.float64), r.astype(np.float64))
        for k, v in zip(names, stats):
            parts[k].append(np.asarray(v))
    c = {k: np.concatenate(v) if v else np.zeros(0) for k, v in parts.items()}
    finite, norm, diff = c["finite"].astype(bool), c["norm"], c["diff"]
    out = dict(
        rel_l2=np.where(finite, np.where(norm > 0, diff / np.where(norm > 0, norm, 1.0), diff), np.inf),
        max_abs=np.where(finite, c["max_abs"], np.inf), finite=finite, argmax=c["argmax"].astype(np.int64),
        ref_argmax=c["ref_argmax"].astype(np.int64), ref_margin=c["ref_margin"].astype(np.float64),
        ref_range=c["ref_range"].astype(np.float64), bit_identical=finite & c["bit_identical"].astype(bool))
    out["argmax_checked"] = out["ref_margin"] > margin_frac * out["ref_range"]
    out["argmax_equal"] = out["argmax"] == out["ref_argmax"]
    return out


def compare(got, ref, margin_frac=ARGMAX_MARGIN):
    """Per-step relative L2 error and the argmax rule of `got` against `ref` ([steps, vocab]), one
    dict per step (compare_rows' numbers)."""
    c = compare_rows(np.asarray(got), np.asarray(ref), margin_frac)
    steps = []
    for i in range(len(c["rel_l2"])):
        fin = bool(c["finite"][i])
        steps.append(dict(step=i, rel_l2=jnum(c["rel_l2"][i]), max_abs=jnum(c["max_abs"][i]) if fin else None,
                          finite=fin, argmax=int(c["argmax"][i]), ref_argmax=int(c["ref_argmax"][i]),
                          argmax_equal=bool(c["argmax_equal"][i]), ref_margin=float(c["ref_margin"][i]),
                          ref_range=float(c["ref_range"][i]), argmax_checked=bool(c["argmax_checked"][i]),
                          bit_identical=bool(c["bit_identical"][i])))
    return steps


def summarize(steps, gate=None, lo=0, hi=None):
    """Worst/mean rel L2, argmax agreement and the gate over steps[lo:hi] of compare()'s per-step
    dicts (summarize_rows on them)."""
    def col(key, none=0.0):
        return np.array([none if s[key] is None else s[key] for s in steps])
    c = dict(rel_l2=col("rel_l2", np.inf).astype(np.float64), argmax_checked=col("argmax_checked").astype(bool),
             argmax_equal=col("argmax_equal").astype(bool), bit_identical=col("bit_identical").astype(bool),
             finite=col("finite").astype(bool))
    return summarize_rows(c, gate, lo, len(steps) if hi is None else min(hi, len(steps)))


def fmt(x, spec=".3g"):
    return "n/a" if x is None else format(x, spec)


# ----------------------------------------------------------------------------------------------
# mkrt-run

def run_mkrt(args, weights, tokens, max_new, dump, logfile, meta=None, extra=()):
    cmd = [args.mkrt, "--ptx", args.ptx]
    if meta:
        cmd += ["--meta", meta]
    cmd += ["--weights", weights, "--tokens", ",".join(str(t) for t in tokens),
            "--max-new", str(max_new), *extra]
    if dump:
        cmd += ["--dump-logits", dump]
    def text(x):
        return x.decode(errors="replace") if isinstance(x, bytes) else (x or "")

    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.mkrt_timeout)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out = 124, text(e.stdout)
        err = text(e.stderr) + f"\n[gpu_parity] mkrt-run killed after {args.mkrt_timeout} s\n"
    wall = time.time() - t0
    with open(logfile, "w") as f:
        f.write("$ " + shlex.join(cmd) + "\n" + out + err + f"\n[exit status {rc}, {wall:.2f} s]\n")
    info = dict(command=shlex.join(cmd), exit_status=rc, wall_s=round(wall, 3), log=os.path.basename(logfile))
    m = re.search(r"weights loaded in ([0-9.]+) s", err)
    if m:
        info["weights_load_s"] = float(m.group(1))
    m = re.search(r"mkrt-run: (.*); weights loaded", err)
    if m:
        info["device"] = m.group(1)
    for key, pat in (("step_ms", r"step time \(all (\d+) steps[^)]*\)"),
                     ("decode_ms", r"per-token latency \((\d+) decode steps[^)]*\)")):
        m = re.search(pat + r": median ([0-9.]+) ms, p90 ([0-9.]+) ms, p99 ([0-9.]+) ms", err)
        if m:
            info[key] = dict(steps=int(m.group(1)), median=float(m.group(2)), p90=float(m.group(3)),
                             p99=float(m.group(4)))
    if rc != 0:
        info["stderr_tail"] = err[-2000:]
    return info, out


# ----------------------------------------------------------------------------------------------
# Golden mode

def golden_mode(args):
    data = args.golden
    tokens = [int(t) for t in open(os.path.join(data, "tiny_llama_tokens.txt")).read().strip().split(",")]
    os.makedirs(args.out, exist_ok=True)
    npy = os.path.join(args.out, "mkdsl_logits.npy")
    res = dict(mode="golden", command="python3 " + shlex.join(sys.argv),
               date_utc=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               data=data, tokens=tokens, ptx=args.ptx, versions=dict(python=platform.python_version(),
                                                                     numpy=np.__version__))
    info, _ = run_mkrt(args, os.path.join(data, "tiny_llama.safetensors"), tokens, 0, npy,
                       os.path.join(args.out, "mkrt.log"), meta=args.meta)
    res["mkrt"] = info
    if info["exit_status"] != 0 or not os.path.exists(npy):
        res["passed"] = False
        res["error"] = "mkrt-run failed"
        return finish_golden(args, res)
    got = np.load(npy)
    refs = [("hf_f32", os.path.join(data, "tiny_llama_logits_f32.npy"), REL_L2_GATE, True),
            ("hf_bf16", os.path.join(data, "tiny_llama_logits.npy"), GOLDEN_BF16_GATE, True)]
    if args.cpu_logits:
        refs.append(("cpu_interpreter", args.cpu_logits, CPU_GATE, False))
    res["comparisons"] = {}
    ok = True
    for name, path, gate, argmax_gate in refs:
        ref = np.load(path)
        steps = compare(got, ref)
        s = summarize(steps, gate)
        if not argmax_gate:  # against the interpreter the bound on rel L2 is the check
            s["passed"] = bool(not s["steps_over_gate"] and s["all_finite"])
        s["max_abs"] = jnum(max((x["max_abs"] or 0.0) for x in steps)) if s["all_finite"] else None
        res["comparisons"][name] = dict(reference=path, summary=s, per_step=steps)
        ok = ok and s["passed"]
    res["passed"] = bool(ok)
    return finish_golden(args, res)


def finish_golden(args, res):
    with open(os.path.join(args.out, "parity.json"), "w") as f:
        json.dump(res, f, indent=1)
    lines = ["# GPU parity: mkrt-run on the committed tiny goldens (tests/data)", "",
             "```", res["command"], "```", "",
             f"mkrt-run: `{res['mkrt']['command']}` (exit {res['mkrt']['exit_status']})", ""]
    if "comparisons" in res:
        lines += ["| reference | gate | worst rel L2 (step) | mean | max abs | bit-identical steps | argmax equal | "
                  "argmax rule (ok/checked) | result |", "|---|---|---|---|---|---|---|---|---|"]
        for name, c in res["comparisons"].items():
            s = c["summary"]
            lines.append(f"| {name} | {s['gate']:g} | {fmt(s['worst_rel_l2'])} ({s['worst_step']}) | "
                         f"{fmt(s['mean_rel_l2'])} | {fmt(s['max_abs'])} | {s['bit_identical_steps']}/{s['steps']} | "
                         f"{s['argmax_equal']}/{s['steps']} | {s['argmax_checked_equal']}/{s['argmax_checked']} | "
                         f"{'PASS' if s['passed'] else 'FAIL'} |")
    else:
        lines.append("mkrt-run failed: " + res.get("error", "") + "\n\n```\n" + res["mkrt"].get("stderr_tail", "") + "\n```")
    lines += ["", f"Result: **{'PASS' if res['passed'] else 'FAIL'}**", ""]
    with open(os.path.join(args.out, "parity.md"), "w") as f:
        f.write("\n".join(lines))
    log("\n".join(lines))
    c = res.get("comparisons", {})
    parts = [f"{k} worst {fmt(v['summary']['worst_rel_l2'])}" for k, v in c.items()]
    log(f"PARITY golden-tiny: {'PASS' if res['passed'] else 'FAIL'}: " + ("; ".join(parts) or res.get("error", "")))
    return 0 if res["passed"] else 1


# ----------------------------------------------------------------------------------------------
# Model mode: transformers side

def expected_inv_freq(cv):
    """RoPE inverse frequencies in float64: theta^(-2i/d), with llama3 scaling when rope_factor != 1
    (the formula of Meta's reference and of transformers' _compute_llama3_parameters)."""
    d = int(cv["head_dim"])
    theta = float(cv["rope_theta"])
    inv = 1.0 / theta ** (np.arange(0, d, 2, dtype=np.float64) / d)
    factor = float(cv.get("rope_factor", 1.0))
    if factor == 1.0:
        return inv
    lo, hi, orig = float(cv["rope_low_freq"]), float(cv["rope_high_freq"]), float(cv["rope_orig_ctx"])
    low_wl, high_wl = orig / lo, orig / hi
    wl = 2 * math.pi / inv
    scaled = np.where(wl > low_wl, inv / factor, inv)
    smooth = (orig / wl - lo) / (hi - lo)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wl < high_wl) & ~(wl > low_wl)
    return np.where(medium, smoothed, scaled)


def rope_params(cv):
    theta = float(cv["rope_theta"])
    factor = float(cv.get("rope_factor", 1.0))
    if factor == 1.0:
        return {"rope_type": "default", "rope_theta": theta}, None
    scaling = {"rope_type": "llama3", "factor": factor, "low_freq_factor": float(cv["rope_low_freq"]),
               "high_freq_factor": float(cv["rope_high_freq"]),
               "original_max_position_embeddings": int(round(float(cv["rope_orig_ctx"])))}
    return dict(scaling, rope_theta=theta), scaling


def make_config(cv, torch, transformers):
    from transformers import LlamaConfig
    from transformers.models.llama import modeling_llama
    base = dict(
        vocab_size=int(cv["vocab"]), hidden_size=int(cv["hidden"]), num_hidden_layers=int(cv["layers"]),
        num_attention_heads=int(cv["heads"]), num_key_value_heads=int(cv["kv_heads"]),
        head_dim=int(cv["head_dim"]), intermediate_size=int(cv["ffn"]), rms_norm_eps=float(cv["rms_eps"]),
        max_position_embeddings=int(cv["max_seq"]), tie_word_embeddings=False, hidden_act="silu",
        attention_bias=False, mlp_bias=False, initializer_range=0.02, attn_implementation="eager",
    )
    params, scaling = rope_params(cv)
    theta = params["rope_theta"]
    if scaling is None:  # as make_hf_golden.py: 4.x rope_theta; 5.x rope_parameters
        candidates = [("rope_theta", dict(rope_theta=theta)),
                      ("rope_parameters", dict(rope_parameters=dict(params)))]
    else:  # 5.x rope_parameters; 4.x rope_theta + rope_scaling
        candidates = [("rope_parameters", dict(rope_parameters=dict(params))),
                      ("rope_theta+rope_scaling", dict(rope_theta=theta, rope_scaling=dict(scaling)))]
    want = expected_inv_freq(cv)
    tried = []
    for label, extra in candidates:
        try:
            cfg = LlamaConfig(**base, **extra)
        except Exception as e:  # noqa: BLE001 - the next form may work
            tried.append(f"{label}: {type(e).__name__}: {e}")
            continue
        rp = getattr(cfg, "rope_parameters", None)
        if isinstance(rp, dict):
            rp.update(params)
        try:
            if getattr(cfg, "rope_theta", None) is not None:
                cfg.rope_theta = theta
        except Exception:  # noqa: BLE001
            pass
        cfg._attn_implementation = "eager"
        try:
            rot = modeling_llama.LlamaRotaryEmbedding(config=cfg)
        except Exception as e:  # noqa: BLE001
            tried.append(f"{label}: rotary embedding: {type(e).__name__}: {e}")
            continue
        got = rot.inv_freq.double().cpu().numpy()
        scale = float(getattr(rot, "attention_scaling", 1.0))
        err = float(np.max(np.abs(got / want - 1.0))) if got.shape == want.shape else float("inf")
        if err < 1e-5 and scale == 1.0:
            return cfg, dict(form=label, inv_freq_max_rel_err=err, attention_scaling=scale,
                             rope_type=getattr(rot, "rope_type", None), expected_params=params,
                             tried=tried)
        tried.append(f"{label}: inv_freq off by {err:.3g} (relative), attention_scaling {scale}")
        log(f"config form {label}: inv_freq max relative error {err:.3g}, attention_scaling {scale}; trying next")
    raise RuntimeError("could not make a LlamaConfig whose RoPE matches the .mk config: " + "; ".join(tried))


def reinit(model, seed, device, torch):
    """INIT_STD's initialisation (scaled to the model's fan-in), drawn in sorted-name order from one
    generator seeded with `seed`; returns the std of each parameter."""
    gen = torch.Generator(device=device).manual_seed(seed)
    stds = {}
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            if p.device.type != torch.device(device).type:
                raise RuntimeError(f"{name} is on {p.device}, the generator on {device}")
            if name.endswith("norm.weight"):
                p.copy_(1.0 + NORM_STD * torch.randn(p.shape, generator=gen, device=device))
                stds[name] = f"1 + {NORM_STD} * randn"
                continue
            kind = [k for k in INIT_STD if f"{k}.weight" in name]
            if len(kind) != 1:
                raise RuntimeError(f"unexpected parameter {name}")
            std = INIT_STD[kind[0]]
            if kind[0] in TINY_FAN_IN and p.shape[1] != TINY_FAN_IN[kind[0]]:
                std = std * math.sqrt(TINY_FAN_IN[kind[0]] / p.shape[1])
            p.copy_(std * torch.randn(p.shape, generator=gen, device=device))
            stds[name] = std
    return stds


def load_model(path, dtype, torch):
    from transformers import LlamaForCausalLM
    for key in ("dtype", "torch_dtype"):  # transformers >= 4.56 / 5.x: dtype; older: torch_dtype
        try:
            model = LlamaForCausalLM.from_pretrained(path, attn_implementation="eager", **{key: dtype})
        except TypeError:
            continue
        if next(model.parameters()).dtype == dtype:
            return model
    raise RuntimeError(f"could not load the model in {dtype}")


def hf_decode(model, tokens, device, torch):
    """Teacher-forced decode, one token per forward, KV cache fed back: float32 numpy logits
    [steps, vocab] and the name of the cache class."""
    out_logits = []
    past = None
    with torch.no_grad():
        for t in tokens:
            ids = torch.tensor([[t]], dtype=torch.long, device=device)
            out = model(input_ids=ids, past_key_values=past, use_cache=True)
            past = out.past_key_values
            out_logits.append(out.logits[0, -1].float().cpu())
    return torch.stack(out_logits).numpy(), type(past).__name__


def hf_teacher_forced(model, tokens, device, torch, chunk=2048):
    """Teacher-forced logits of every position, float32 numpy [steps, vocab]: the sequence fed in
    chunks of `chunk` tokens, the KV cache fed back between chunks (row i sees tokens 0 .. i, as a
    decode step at position i does). One forward per chunk instead of one per token: thousands of
    positions in seconds."""
    out = None
    past = None
    with torch.no_grad():
        for lo in range(0, len(tokens), chunk):
            ids = torch.tensor([tokens[lo:lo + chunk]], dtype=torch.long, device=device)
            o = model(input_ids=ids, past_key_values=past, use_cache=True)
            past = o.past_key_values
            lg = o.logits[0].float().cpu().numpy()
            if out is None:
                out = np.empty((len(tokens), lg.shape[1]), dtype=np.float32)
            out[lo:lo + len(lg)] = lg
            del o, lg
    return out


def shard_manually(wdir, max_bytes, torch):
    """Split model.safetensors into shards + index, as save_pretrained would (fallback)."""
    import safetensors.torch
    single = os.path.join(wdir, "model.safetensors")
    sd = safetensors.torch.load_file(single)
    groups, cur, size = [], [], 0
    for k in sorted(sd):
        n = sd[k].numel() * sd[k].element_size()
        if cur and size + n > max_bytes:
            groups.append(cur)
            cur, size = [], 0
        cur.append(k)
        size += n
    groups.append(cur)
    wmap, total = {}, 0
    for i, g in enumerate(groups):
        name = f"model-{i + 1:05d}-of-{len(groups):05d}.safetensors"
        safetensors.torch.save_file({k: sd[k] for k in g}, os.path.join(wdir, name), metadata={"format": "pt"})
        for k in g:
            wmap[k] = name
            total += sd[k].numel() * sd[k].element_size()
    with open(os.path.join(wdir, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": wmap}, f, indent=1)
    os.remove(single)


def size_to_bytes(s):
    m = re.fullmatch(r"\s*([0-9.]+)\s*([KMG]?)B?\s*", s.upper())
    if not m:
        raise ValueError(f"bad size {s}")
    return int(float(m.group(1)) * {"": 1, "K": 1000, "M": 1000 ** 2, "G": 1000 ** 3}[m.group(2)])


def model_mode(args):
    import torch
    import transformers
    import safetensors
    import safetensors.torch
    from transformers import LlamaForCausalLM

    t_start = time.time()
    os.makedirs(args.out, exist_ok=True)
    meta = json.load(open(args.meta))
    cv = meta.get("config_values")
    if not cv:
        raise RuntimeError(f"{args.meta} has no config_values (rebuild with a current mkdsl)")
    max_seq = int(cv["max_seq"])
    steps = max_seq if args.steps == "all" else int(args.steps)
    args.steps = steps
    prompt = min(args.prompt, steps)
    args.prompt = prompt
    if not 0 < prompt <= steps:
        raise RuntimeError("--steps and --prompt must be at least 1")
    if steps > max_seq:
        raise RuntimeError(f"--steps {steps} exceeds the KV cache (max_seq {max_seq})")
    name = args.name or meta.get("config") or os.path.basename(args.meta).split(".")[0]

    device = "cuda" if torch.cuda.is_available() else "cpu"
    flags = {}
    torch.set_float32_matmul_precision("highest")
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    except Exception as e:  # noqa: BLE001
        flags["allow_bf16_reduced_precision_reduction_error"] = str(e)
    flags["float32_matmul_precision"] = torch.get_float32_matmul_precision()
    flags["allow_tf32"] = bool(torch.backends.cuda.matmul.allow_tf32)
    flags["allow_bf16_reduced_precision_reduction"] = bool(
        getattr(torch.backends.cuda.matmul, "allow_bf16_reduced_precision_reduction", False))

    res = dict(
        mode="model", name=name, command="python3 " + shlex.join(sys.argv),
        date_utc=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        meta=args.meta, ptx=args.ptx, program=meta.get("program"), mk_config=meta.get("config"),
        target=meta.get("target"), arch=meta.get("arch"), grid=meta.get("grid"), block=meta.get("block"),
        config_values=cv, steps=steps, prompt=prompt, seed=args.seed, init=args.init,
        device=torch.cuda.get_device_name(0) if device == "cuda" else platform.processor() or "cpu",
        torch_flags=flags,
        versions=dict(python=platform.python_version(), torch=torch.__version__, torch_cuda=torch.version.cuda,
                      transformers=transformers.__version__, safetensors=safetensors.__version__,
                      numpy=np.__version__),
        gate_note=GATE_NOTE, timings_s={},
    )
    try:
        res["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                       capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception:  # noqa: BLE001
        pass

    # 1. config: its RoPE must equal the .mk config's (checked against the formula in float64)
    cfg, rope = make_config(cv, torch, transformers)
    res["rope"] = rope
    res["hf_config"] = json.loads(cfg.to_json_string())
    log(f"[{name}] config: {rope['form']}, inv_freq max rel err {rope['inv_freq_max_rel_err']:.2e}")

    # 2. weights
    t0 = time.time()
    init_device = args.init_device
    n_params_est = (2 * int(cv["vocab"]) * int(cv["hidden"]) + int(cv["layers"]) * (
        int(cv["hidden"]) * (int(cv["heads"]) + 2 * int(cv["kv_heads"])) * int(cv["head_dim"])
        + int(cv["heads"]) * int(cv["head_dim"]) * int(cv["hidden"]) + 3 * int(cv["hidden"]) * int(cv["ffn"])))
    if init_device == "auto":
        init_device = "cpu" if n_params_est < 50_000_000 or device == "cpu" else device
    torch.manual_seed(args.seed)
    with torch.device(init_device):
        model = LlamaForCausalLM(cfg)  # transformers' own initialisation (initializer_range 0.02)
    stds = reinit(model, args.seed, init_device, torch) if args.init == "scaled" else {}
    model = model.to(torch.bfloat16)
    n_params = sum(p.numel() for p in model.parameters())
    wdir = os.path.join(args.work, f"{name}-weights")
    shutil.rmtree(wdir, ignore_errors=True)
    try:
        model.save_pretrained(wdir, max_shard_size=args.max_shard_size)
    except TypeError:
        model.save_pretrained(wdir)
    index = os.path.join(wdir, "model.safetensors.index.json")
    sharding = "save_pretrained"
    max_bytes = size_to_bytes(args.max_shard_size)
    total_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    if not os.path.exists(index) and total_bytes > max_bytes:
        shard_manually(wdir, max_bytes, torch)
        sharding = "manual (save_pretrained wrote one file)"
    files = sorted(f for f in os.listdir(wdir) if f.endswith(".safetensors"))
    if os.path.exists(index):
        wmap = json.load(open(index))["weight_map"]
        saved_names = set(wmap)
    else:
        with safetensors.safe_open(os.path.join(wdir, "model.safetensors"), "pt") as f:
            saved_names = set(f.keys())
    missing = []
    for t in meta["tensors"]:
        if t.get("kind") != "weight":
            continue
        for src in t.get("sources", []):
            if src not in saved_names and not (src == "lm_head.weight" and "model.embed_tokens.weight" in saved_names):
                missing.append(f"{t['name']} <- {src}")
    init_note = ("every projection drawn in sorted-name order from one torch.Generator on init_device seeded with "
                 "--seed, in float32, with INIT_STD * sqrt(tiny fan-in / fan-in); norm gains 1 + NORM_STD * randn"
                 if args.init == "scaled" else
                 "transformers' own _init_weights (normal with std initializer_range = 0.02, norm gains 1), "
                 "after torch.manual_seed(--seed) on init_device")
    res["weights"] = dict(
        dir=wdir, init=args.init, init_device=init_device, seed=args.seed, parameters=n_params, bytes=total_bytes,
        max_shard_size=args.max_shard_size, sharding=sharding if os.path.exists(index) else "single file",
        index=os.path.exists(index), files=files, tensors=len(saved_names),
        init_note=init_note + "; then rounded to bf16 (model.to(bfloat16).save_pretrained)",
        mkdsl_sources_missing=missing)
    if args.init == "scaled":
        res["weights"].update(init_std=INIT_STD, tiny_fan_in=TINY_FAN_IN, norm_init=f"1 + {NORM_STD} * randn",
                              std_per_kind={k: v for n, v in sorted(stds.items())
                                            for k in [next((k for k in INIT_STD if f"{k}.weight" in n), "norm")]})
    if n_params < 50_000_000:
        res["weights"]["sha256"] = {f: sha256(os.path.join(wdir, f)) for f in files}
    if args.golden_weights and os.path.exists(args.golden_weights) and not os.path.exists(index):
        a = safetensors.torch.load_file(os.path.join(wdir, "model.safetensors"))
        b = safetensors.torch.load_file(args.golden_weights)
        res["weights"]["equals_golden_weights"] = bool(set(a) == set(b) and all(torch.equal(a[k], b[k]) for k in a))
        res["weights"]["golden_weights"] = args.golden_weights
    if missing:
        raise RuntimeError("the saved checkpoint lacks tensors the kernel binds: " + ", ".join(missing))
    ref_sd = {k: v for k, v in model.state_dict().items() if k in saved_names}
    res["timings_s"]["build_and_save_weights"] = round(time.time() - t0, 2)
    log(f"[{name}] weights ({args.init} init): {n_params:,} parameters, {len(files)} file(s) in {wdir} "
        f"({res['weights']['sharding']}), init on {init_device}, {time.time() - t0:.1f} s")
    del model

    gen = torch.Generator().manual_seed(args.seed + 1)
    tokens = torch.randint(0, int(cv["vocab"]), (steps,), generator=gen).tolist()
    res["tokens"] = tokens if steps <= 256 else f"{steps} tokens: torch.randint(0, vocab, ({steps},)) with a CPU generator seeded {args.seed + 1}"
    res["token_seed"] = args.seed + 1

    # 3a. mkrt-run, teacher-forced (before the transformers models take GPU memory); the logits of
    # long runs are gigabytes, so they go to the scratch folder, not the output.
    t0 = time.time()
    mk_npy = os.path.join(args.work, f"{name}-mkdsl_logits.npy")
    info, _ = run_mkrt(args, wdir, tokens, 0, mk_npy, os.path.join(args.out, "mkrt.log"), meta=args.meta)
    res["mkrt"] = info
    res["timings_s"]["mkrt_teacher_forced"] = round(time.time() - t0, 2)
    log(f"[{name}] mkrt-run: exit {info['exit_status']}, {info['wall_s']} s, step {info.get('step_ms')}")
    # 3b. mkrt-run greedy from the prompt (informational)
    greedy = None
    if not args.no_greedy and info["exit_status"] == 0:
        t0 = time.time()
        g_npy = os.path.join(args.work, f"{name}-mkdsl_greedy_logits.npy")
        ginfo, gout = run_mkrt(args, wdir, tokens[:prompt], steps - prompt + 1, g_npy,
                               os.path.join(args.out, "mkrt_greedy.log"), meta=args.meta)
        greedy = dict(mkrt=ginfo, logits=g_npy)
        if ginfo["exit_status"] == 0:
            gen_ids = [int(x) for x in gout.strip().split(",") if x.strip()]
            greedy["generated"] = gen_ids
            greedy["sequence"] = tokens[:prompt] + gen_ids[:-1]
        res["timings_s"]["mkrt_greedy"] = round(time.time() - t0, 2)

    # 3c. transformers bf16 and f32, teacher-forced over every position; the f32 run also decodes
    # the first steps one token per forward (the path the goldens use), which must agree with it.
    torch.cuda.empty_cache() if device == "cuda" else None
    hf = {}
    for tag, dtype in (("bf16", torch.bfloat16), ("f32", torch.float32)):
        t0 = time.time()
        m = load_model(wdir, dtype, torch).to(device).eval()
        assert m.config._attn_implementation == "eager", m.config._attn_implementation
        inv = m.model.rotary_emb.inv_freq.double().cpu().numpy()
        sd = m.state_dict()
        mism = [k for k, v in ref_sd.items()
                if not (torch.equal(sd[k].to(v.device).to(torch.bfloat16), v)
                        and torch.equal(sd[k].to(v.device).float(), v.float()))]
        if mism:
            raise RuntimeError(f"{tag}: loaded weights differ from the saved bf16 values: {mism[:5]}")
        del sd
        lg = hf_teacher_forced(m, tokens, device, torch, args.ref_chunk)
        hf[tag] = lg
        run = dict(out_dtype=str(dtype), reference="chunked teacher-forced forwards, "
                                                   f"{args.ref_chunk} tokens a chunk, KV cache fed back",
                   inv_freq_dtype=str(m.model.rotary_emb.inv_freq.dtype),
                   inv_freq_max_rel_err=float(np.max(np.abs(inv / expected_inv_freq(cv) - 1.0))),
                   weights_equal_saved=True)
        if tag == "f32":
            k = min(steps, args.cache_check)
            one, cache = hf_decode(m, tokens[:k], device, torch)
            c = compare_rows(one, lg[:k])
            run.update(cache=cache, one_token_per_forward_steps=k,
                       one_token_per_forward_worst_rel_l2=jnum(c["rel_l2"].max()))
            if not c["rel_l2"].max() <= REF_SELF_GATE:
                raise RuntimeError(f"transformers float32: the chunked teacher-forced logits differ from one token "
                                   f"per forward by {c['rel_l2'].max():.3g} over the first {k} steps")
            if greedy and "sequence" in greedy:
                try:
                    if len(greedy["sequence"]) != steps:
                        raise RuntimeError(f"mkrt-run printed {len(greedy['generated'])} greedy tokens, "
                                           f"expected {steps - prompt + 1}")
                    greedy["hf_f32_logits"] = hf_teacher_forced(m, greedy["sequence"], device, torch, args.ref_chunk)
                except Exception as e:  # noqa: BLE001 - informational only
                    greedy["error"] = f"{type(e).__name__}: {e}"
        res.setdefault("hf_runs", {})[tag] = run
        if lg.nbytes <= args.keep_logits_bytes:
            np.save(os.path.join(args.out, f"hf_{tag}_logits.npy"), lg)
        del m
        if device == "cuda":
            torch.cuda.empty_cache()
        res["timings_s"][f"hf_{tag}"] = round(time.time() - t0, 2)
        log(f"[{name}] transformers {tag}: {time.time() - t0:.1f} s")
    del ref_sd

    if args.prefill_check:
        res["prefill"] = prefill_check(args, meta, wdir, tokens, hf["f32"], name)
    return analyze_model(args, res, name, tokens, hf, info, mk_npy, greedy, wdir, t_start)


def prefill_chunk_tokens(meta):
    """T of the kernel's prefill_logits step (its `tokens` input), or None without one."""
    for st in meta.get("steps", []):
        if st.get("step") == "prefill_logits":
            for t in st.get("tensors", []):
                if t.get("name") == "tokens" and t.get("kind") == "input" and len(t.get("shape", [])) == 1:
                    return int(t["shape"][0])
    return None


def prefill_chunkings(T, n):
    """Two chunkings of n tokens in chunks of at most T: greedy whole chunks, and a short first
    chunk (about T / 5) so that the chunks after it start mid-block and the last is partial."""
    def greedy(first):
        out, left = ([first] if first else []), n - first
        while left > 0:
            out.append(min(T, left))
            left -= out[-1]
        return out
    return [greedy(0), greedy(max(1, min(T // 5, n - 1)))] if n > 1 else [[1]]


def prefill_check(args, meta, wdir, tokens, golden_f32, name):
    """Step 6: mk-prefill-check on the saved weights, the tokens and transformers' float32 logits."""
    T = prefill_chunk_tokens(meta)
    if T is None:
        raise RuntimeError(f"--prefill-check: {args.meta} has no prefill_logits step")
    gold = os.path.join(args.work, f"{name}-hf_f32_logits.npy")
    tok = os.path.join(args.work, f"{name}-tokens.txt")
    np.save(gold, np.ascontiguousarray(golden_f32, dtype=np.float32))
    with open(tok, "w") as f:
        f.write(",".join(str(t) for t in tokens))
    chunkings = prefill_chunkings(T, len(tokens))
    cmd = [args.prefill_check, "--kernel", args.ptx, "--weights", wdir, "--tokens", tok, "--golden-f32", gold,
           "--gate-hf", str(REL_L2_GATE), "--gate-decode", str(2 * REL_L2_GATE), "--argmax-margin", str(ARGMAX_MARGIN)]
    for c in chunkings:
        cmd += ["--chunks", ",".join(map(str, c))]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.mkrt_timeout)
        rc, out = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        so = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        rc, out = 124, so + f"\n[gpu_parity] mk-prefill-check killed after {args.mkrt_timeout} s\n"
    with open(os.path.join(args.out, "prefill_check.log"), "w") as f:
        f.write("$ " + shlex.join(cmd) + "\n" + out + f"\n[exit status {rc}]\n")
    os.remove(gold)
    # The chunkings, each prefill step's decode-after-prefill pair ("prefill_short of ..."), decode.
    lines = [ln for ln in out.splitlines() if ln.startswith(("chunks ", "prefill", "decode kernel "))]
    log(f"[{name}] prefill check (chunks of {T}): exit {rc}, {time.time() - t0:.1f} s\n  " + "\n  ".join(lines))
    return dict(command=shlex.join(cmd), exit_status=rc, chunk_tokens=T, chunkings=chunkings, results=lines,
                passed=rc == 0, log="prefill_check.log", wall_s=round(time.time() - t0, 2))


def windows(c, steps, n):
    """The per-position numbers in n windows of equal length: a dict each (lo, hi, worst and mean
    rel L2, the argmax rule)."""
    w = max(1, -(-steps // n))
    out = []
    for lo in range(0, steps, w):
        hi = min(lo + w, steps)
        rel = c["rel_l2"][lo:hi]
        chk = c["argmax_checked"][lo:hi]
        out.append(dict(lo=lo, hi=hi - 1, worst_rel_l2=jnum(rel.max()), mean_rel_l2=jnum(rel.mean()),
                        argmax_checked=int(chk.sum()),
                        argmax_checked_equal=int((chk & c["argmax_equal"][lo:hi]).sum())))
    return out


def summarize_rows(c, gate=None, lo=0, hi=None):
    """summarize() of compare_rows' arrays over steps lo .. hi."""
    hi = len(c["rel_l2"]) if hi is None else hi
    rel = np.where(np.isfinite(c["rel_l2"][lo:hi]), c["rel_l2"][lo:hi], np.inf)
    idx = np.arange(lo, hi)
    chk = c["argmax_checked"][lo:hi]
    bad_argmax = idx[chk & ~c["argmax_equal"][lo:hi]].tolist()
    out = dict(steps=int(hi - lo), worst_rel_l2=jnum(rel.max()) if hi > lo else None,
               worst_step=int(idx[np.argmax(rel)]) if hi > lo else None,
               mean_rel_l2=jnum(rel.mean()) if hi > lo else None,
               argmax_equal=int(c["argmax_equal"][lo:hi].sum()), argmax_checked=int(chk.sum()),
               argmax_checked_equal=int(chk.sum()) - len(bad_argmax), argmax_failures=bad_argmax[:50],
               bit_identical_steps=int(c["bit_identical"][lo:hi].sum()), all_finite=bool(c["finite"][lo:hi].all()))
    if gate is not None:
        over = idx[~(rel <= gate)].tolist()
        out.update(gate=gate, steps_over_gate=over[:50], steps_over_gate_count=len(over),
                   passed=bool(not over and not bad_argmax and out["all_finite"]))
    return out


def analyze_model(args, res, name, tokens, hf, info, mk_npy, greedy, wdir, t_start):
    """Step 4: the comparisons, the gate, the per-position curve (curve.tsv.gz), parity.json and
    parity.md (numpy only)."""
    steps, prompt = args.steps, args.prompt
    comps, rows = {}, {}
    if info["exit_status"] == 0 and os.path.exists(mk_npy):
        mk = np.load(mk_npy, mmap_mode="r")
        if mk.shape != hf["f32"].shape:
            raise RuntimeError(f"mkrt-run wrote logits of shape {mk.shape}, expected {hf['f32'].shape}")
        pairs = [("mkdsl_vs_hf_f32", mk, hf["f32"], REL_L2_GATE), ("mkdsl_vs_hf_bf16", mk, hf["bf16"], None)]
    else:
        pairs = []
    pairs.append(("hf_bf16_vs_hf_f32", hf["bf16"], hf["f32"], None))
    for cname, a, b, gate in pairs:
        c = compare_rows(a, b)
        rows[cname] = c
        comps[cname] = dict(all=summarize_rows(c, gate), prompt=summarize_rows(c, gate, 0, prompt),
                            decode=summarize_rows(c, gate, prompt, steps), windows=windows(c, steps, args.windows))
    res["comparisons"] = comps
    if steps <= 256:  # per-step rows in the JSON; longer runs have them in curve.tsv.gz only
        res["per_step"] = [dict(step=i, token=tokens[i], phase="prompt" if i < prompt else "decode",
                                **{cn: dict(rel_l2=jnum(c["rel_l2"][i]), argmax=int(c["argmax"][i]),
                                            ref_argmax=int(c["ref_argmax"][i]),
                                            argmax_checked=bool(c["argmax_checked"][i]))
                                   for cn, c in rows.items()}) for i in range(steps)]
    with gzip.open(os.path.join(args.out, "curve.tsv.gz"), "wt") as f:
        names = list(rows)
        f.write("position\t" + "\t".join(f"{n}_rel_l2\t{n}_argmax_checked\t{n}_argmax_equal" for n in names) + "\n")
        for i in range(steps):
            f.write(str(i) + "".join(f"\t{rows[n]['rel_l2'][i]:.4e}\t{int(rows[n]['argmax_checked'][i])}"
                                     f"\t{int(rows[n]['argmax_equal'][i])}" for n in names) + "\n")
    # For scale: the same gate applied to transformers' own bf16 run (not part of the pass/fail).
    hb = summarize_rows(rows["hf_bf16_vs_hf_f32"], REL_L2_GATE)
    res["transformers_bf16_under_the_gate"] = {k: hb[k] for k in ("worst_rel_l2", "worst_step", "steps_over_gate_count",
                                                                  "argmax_failures", "passed")}

    if greedy is not None:
        g = {k: v for k, v in greedy.items() if k not in ("hf_f32_logits", "logits")}
        try:
            greedy_check(greedy, g, prompt)
        except Exception as e:  # noqa: BLE001 - informational only
            g["error"] = f"{type(e).__name__}: {e}"
        res["greedy"] = g
        if os.path.exists(greedy["logits"]):
            os.remove(greedy["logits"])

    gate_c = comps.get("mkdsl_vs_hf_f32", {}).get("all")
    res["passed"] = bool(gate_c and gate_c["passed"]) and res.get("prefill", {}).get("passed", True)
    if not gate_c:
        res["error"] = "mkrt-run failed: " + info.get("stderr_tail", "")[-500:]
    res["timings_s"]["total"] = round(time.time() - t_start, 2)
    with open(os.path.join(args.out, "parity.json"), "w") as f:
        json.dump(res, f, indent=1)
    md = write_model_md(args, res)
    log(md)
    if os.path.exists(mk_npy):
        if os.path.getsize(mk_npy) <= args.keep_logits_bytes:
            shutil.copy(mk_npy, os.path.join(args.out, "mkdsl_logits.npy"))
        os.remove(mk_npy)
    if not args.keep_weights:
        shutil.rmtree(wdir, ignore_errors=True)
    s = gate_c or {}
    b = comps.get("mkdsl_vs_hf_bf16", {}).get("all", {})
    log(f"PARITY {name}: {'PASS' if res['passed'] else 'FAIL'}: {steps} positions, worst rel L2 vs f32 "
        f"{fmt(s.get('worst_rel_l2'))} (position {s.get('worst_step')}), vs bf16 {fmt(b.get('worst_rel_l2'))}; "
        f"transformers bf16 vs f32 worst {fmt(hb.get('worst_rel_l2'))}; argmax rule vs f32 "
        f"{s.get('argmax_checked_equal')}/{s.get('argmax_checked')}; argmax equal {s.get('argmax_equal')}/{steps}"
        + (f"; prefill {'PASS' if res['prefill']['passed'] else 'FAIL'}: " + "; ".join(res["prefill"]["results"])
           if "prefill" in res else ""))
    return 0 if res["passed"] else 1


def greedy_check(greedy, g, prompt):
    """mkrt-run's greedy choices against transformers float32 teacher-forced on the same sequence."""
    if "hf_f32_logits" not in greedy or "sequence" not in greedy:
        return
    seq, gen_ids = greedy["sequence"], greedy["generated"]
    c = compare_rows(np.load(greedy["logits"], mmap_mode="r"), greedy["hf_f32_logits"])
    checked = ok = 0
    bad = []
    for i in range(prompt - 1, len(seq)):
        choice = gen_ids[i - prompt + 1]
        if c["argmax_checked"][i]:
            checked += 1
            if choice == c["ref_argmax"][i]:
                ok += 1
            else:
                bad.append(i)
    own = sum(int(gen_ids[i - prompt + 1]) == int(c["argmax"][i]) for i in range(prompt - 1, len(seq)))
    g.update(rel_l2_vs_hf_f32=summarize_rows(c, None), generated_tokens=len(gen_ids), choices=len(seq) - prompt + 1,
             choices_checked=checked, choices_equal_hf_f32_argmax=ok, choice_failures=bad[:50],
             choices_equal_own_logits_argmax=own,
             note="not gated: mkrt-run --max-new from the prompt; its greedy sequence teacher-forced through "
                  "transformers float32; each greedy choice compared with transformers' argmax where its top-2 "
                  "margin exceeds 1e-2 of the range, and with the argmax of mkrt's own dumped logits")


def write_model_md(args, res):
    """parity.md: the run, the summary table and the per-position curve in windows; returns it."""
    c = res["comparisons"]
    lines = [f"# GPU parity: {res['name']} ({res.get('program')}, config {res.get('mk_config')}) against transformers",
             "", "```", res["command"], "```", "",
             f"- {res['date_utc']}, {res.get('device')}, driver {res.get('driver', '?')}; "
             + ", ".join(f"{k} {v}" for k, v in res["versions"].items()),
             f"- {res['steps']} positions teacher-forced (the cache holds {res['config_values'].get('max_seq')}; "
             f"the first {res['prompt']} count as the prompt), tokens from seed {res['token_seed']}; weights: "
             f"{res['init']} init, seed {res['seed']} on {res['weights']['init_device']}, "
             f"{res['weights']['parameters']:,} parameters, {len(res['weights']['files'])} safetensors "
             f"file(s) ({res['weights']['sharding']}, index {res['weights']['index']})",
             f"- RoPE: {res['rope']['form']} ({res['rope'].get('rope_type')}), inv_freq max relative error "
             f"against the formula {res['rope']['inv_freq_max_rel_err']:.2e}",
             f"- reference: transformers {res['hf_runs']['f32']['reference']}; the first "
             f"{res['hf_runs']['f32'].get('one_token_per_forward_steps')} positions one token per forward agree with it to "
             f"{fmt(res['hf_runs']['f32'].get('one_token_per_forward_worst_rel_l2'))} (rel L2, float32)",
             f"- mkrt-run: exit {res['mkrt']['exit_status']}, step time {res['mkrt'].get('step_ms')}", "",
             "| comparison | positions | worst rel L2 (position) | mean | argmax equal | argmax rule (ok/checked) | gate |",
             "|---|---|---|---|---|---|---|"]
    for cname, parts in c.items():
        for part in ("all", "prompt", "decode"):
            s = parts[part]
            if not s["steps"]:
                continue
            gate = ("PASS" if s["passed"] else "FAIL") + f" (<= {s['gate']:g})" if "gate" in s else "not gated"
            lines.append(f"| {cname} ({part}) | {s['steps']} | {fmt(s['worst_rel_l2'])} ({s['worst_step']}) | "
                         f"{fmt(s['mean_rel_l2'])} | {s['argmax_equal']}/{s['steps']} | "
                         f"{s['argmax_checked_equal']}/{s['argmax_checked']} | {gate} |")
    lines += ["", "The per-position curve (every position in curve.tsv.gz), in windows: worst / mean rel L2.", "",
              "| positions | " + " | ".join(c) + " |", "|---|" + "---|" * len(c)]
    wins = {cn: parts["windows"] for cn, parts in c.items()}
    first = next(iter(wins.values()))
    for i, w in enumerate(first):
        lines.append(f"| {w['lo']}-{w['hi']} | " + " | ".join(
            f"{fmt(wins[cn][i]['worst_rel_l2'])} / {fmt(wins[cn][i]['mean_rel_l2'])}" for cn in c) + " |")
    g = res.get("greedy")
    if g and "choices_checked" in g:
        lines += ["", f"Greedy (informational): mkrt-run generated {g['generated_tokens']} tokens from the prompt; "
                      f"{g['choices_equal_hf_f32_argmax']}/{g['choices_checked']} margin-checked choices equal "
                      f"transformers float32's argmax on that sequence; {g['choices_equal_own_logits_argmax']} "
                      f"choices equal the argmax of mkrt's own logits; rel L2 vs f32 worst "
                      f"{fmt(g['rel_l2_vs_hf_f32']['worst_rel_l2'])}."]
    t = res.get("transformers_bf16_under_the_gate")
    if t:
        lines += ["", f"For scale, the same gate applied to transformers' own bf16 run against its float32 run: "
                      f"{'PASS' if t['passed'] else 'FAIL'} (worst {fmt(t['worst_rel_l2'])} at position {t['worst_step']}, "
                      f"{t['steps_over_gate_count']} of {res['steps']} positions over {REL_L2_GATE:g})."]
    pf = res.get("prefill")
    if pf:
        lines += ["", f"Prefill (step 6, `{pf['command']}`): {'PASS' if pf['passed'] else 'FAIL'} "
                      f"(exit {pf['exit_status']}; chunks of {pf['chunk_tokens']}, chunkings {pf['chunkings']}):", ""]
        lines += [f"- {ln}" for ln in pf["results"]]
    lines += ["", GATE_NOTE, "", f"Result: **{'PASS' if res['passed'] else 'FAIL'}**", ""]
    text = "\n".join(lines)
    with open(os.path.join(args.out, "parity.md"), "w") as f:
        f.write(text)
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--meta", help="kernel metadata (.meta.json; default: the PTX's name)")
    ap.add_argument("--ptx", required=True, help="the kernel (mkdsl build ... --target sm_90a)")
    ap.add_argument("--mkrt", required=True, help="the mkrt-run binary")
    ap.add_argument("--out", required=True, help="output folder (parity.json, parity.md, logs)")
    ap.add_argument("--steps", default="all",
                    help="teacher-forced positions: a number, or 'all' (default): every position of the KV cache")
    ap.add_argument("--prompt", type=int, default=16, help="how many of them count as the prompt (the greedy check's)")
    ap.add_argument("--init", choices=("scaled", "transformers"), default="scaled",
                    help="scaled (default): hf_init.py's INIT_STD scaled to each fan-in, the gate's weights; "
                         "transformers: LlamaForCausalLM's own initialisation (std 0.02)")
    ap.add_argument("--ref-chunk", type=int, default=2048, help="tokens per transformers forward of the reference")
    ap.add_argument("--cache-check", type=int, default=16,
                    help="positions the float32 reference also decodes one token per forward, as a check of it")
    ap.add_argument("--windows", type=int, default=32, help="windows of the per-position curve in parity.md")
    ap.add_argument("--seed", type=int, default=0, help="weights seed; tokens use seed + 1")
    ap.add_argument("--name", help="a name for the model in the reports (default: the .mk config)")
    ap.add_argument("--max-shard-size", default="1GB", help="save_pretrained's max_shard_size")
    ap.add_argument("--init-device", default="auto", help="cpu, cuda or auto (cpu below 50 M parameters)")
    ap.add_argument("--work", default=os.environ.get("TMPDIR", "/tmp"), help="where the checkpoint goes")
    ap.add_argument("--keep-weights", action="store_true", help="keep the saved checkpoint")
    ap.add_argument("--keep-logits-bytes", type=int, default=4 << 20,
                    help="delete logits .npy files larger than this after the comparison")
    ap.add_argument("--golden-weights", help="for the tiny model: compare the weights with this file")
    ap.add_argument("--no-greedy", action="store_true", help="skip the informational greedy check")
    ap.add_argument("--mkrt-timeout", type=int, default=300, help="seconds one mkrt-run may take")
    ap.add_argument("--prefill-check", help="mk-prefill-check: also check the prefill_logits step (step 6)")
    ap.add_argument("--golden", help="golden mode: the tests/data folder")
    ap.add_argument("--cpu-logits", help="golden mode: the CPU interpreter's logits on the golden tokens")
    args = ap.parse_args()
    if not args.meta:
        base = re.sub(r"\.(ptx|cubin)$", "", args.ptx)
        args.meta = base + ".meta.json"
    try:
        return golden_mode(args) if args.golden else model_mode(args)
    except Exception as e:  # noqa: BLE001 - report, write what we have, exit 2
        traceback.print_exc()
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "error.txt"), "w") as f:
            f.write(traceback.format_exc())
        log(f"PARITY {args.name or os.path.basename(args.meta)}: ERROR: {type(e).__name__}: {e}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
