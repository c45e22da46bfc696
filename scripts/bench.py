#!/usr/bin/env python3
"""Decode step-time benchmark of an mkdsl megakernel against PyTorch (issue 6), on one GPU.

Runs on the GPU machine (torch, transformers, safetensors, numpy; no network):

    python3 scripts/bench.py --meta build-gpu/llama1b.meta.json --ptx build-gpu/llama1b.ptx \\
        --mkrt build-gpu/mkrt-run --contexts 512 4096 --out DIR [--parity-json P.json]

In one process, in this order (the JSON is rewritten after every stage, so a run cut short by its
time limit still leaves what it measured):
  1. Device bandwidth (torch): a device-to-device copy of --copy-gib GiB (bytes read + written over
     the time: `copy_tbps`, the reference for `pct_of_copy_bw`) and a read-only stream, torch.sum over
     a 4 GiB bf16 tensor (`read_tbps`, informational). CUDA events, warm-up, median of 20.
  2. The model: random-weight transformers LlamaForCausalLM built from the metadata's config_values
     exactly as scripts/gpu_parity.py builds it (same functions, same seed rule), rounded to bf16 and
     saved as a sharded safetensors folder. mkrt-run and PyTorch both read that folder: the weights
     are shared.
  3. Parity: taken from --parity-json (the parity-llama-3.2-1b check of the same gpu-check.sh run)
     when given, else a short one here: --parity-steps (16) teacher-forced steps through mkrt-run vs
     transformers float32 (TF32 off), gate rel L2 <= 1e-2 per step plus issue 5's argmax rule.
  4. mkdsl, per context c: `mkrt-run --weights DIR --tokens <P random ids> --max-new N` with
     N = --decode-steps + 1 and P = c - decode_steps/2 (capped so the last position fits the KV
     cache: P + N <= max_seq + 1). mkrt-run's per-token latency is CUDA events around each decode
     step's launch; it prints median/p90/p99 over the N - 1 decode steps, at positions P .. P+N-2
     (centred on c; for c = max_seq they end at max_seq - 1). Those are `mkdsl_us`, `mkdsl_p99_us`.
  5. PyTorch, per context c: the saved model loaded in bf16 (sdpa attention), a static KV cache of
     c + --cache-slack (64) positions (transformers StaticCache) prefilled with c random tokens, then one decode step
     at position c (input_ids [1, 1], cache_position [c]):
       - eager: the plain forward, launched as is (`torch_eager_us`); and the same captured in a CUDA
         graph when capture works (`torch_eager_graph_us`, informational);
       - torch.compile(mode="max-autotune-no-cudagraphs") of the forward, the decode step captured in
         a CUDA graph (torch.cuda.CUDAGraph), `torch_compile_us`.
     Each: CUDA events around each of >= --replays (200) launches/replays after warm-up; median, p99.
     A failure (or compile skipped for lack of time, --deadline-s) is recorded and the run goes on.

Step bytes (the floor's numerator): every weight tensor of the metadata counted fully, except the
embedding table (one row), plus the KV cache read at context c: 2 * layers * kv_heads * head_dim * c
* 2 bytes. pct_of_copy_bw = step_bytes / mkdsl time / copy bandwidth; speedup_vs_torch_compile =
torch_compile_us / mkdsl_us (> 1: mkdsl is faster).

Writes OUT/bench.json (one object per (model, context) under "results", plus the GPU, driver,
clocks, versions and the exact command) and OUT/bench.md (the table), and prints the table and one
line `BENCH ...`. Exit status 0 when parity passed and every context has the mkdsl, torch eager
and torch.compile numbers; 1 when parity failed (the timings are still reported, marked); 2 when
something could not run (a benchmark without its comparison is not a result).
"""
import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import time
import traceback
import types

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_parity as gp  # noqa: E402  (the model-building and comparison code is shared)

T0 = time.time()


def log(*a):
    print(*a, flush=True)


def elapsed():
    return time.time() - T0


def pct(v, q):
    return float(np.percentile(np.asarray(v, dtype=np.float64), q))


def smi(query):
    try:
        return subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv"], capture_output=True,
                              text=True, timeout=30).stdout.strip()
    except Exception as e:  # noqa: BLE001
        return f"nvidia-smi failed: {e}"


# ----------------------------------------------------------------------------------------------
# Timing helpers (CUDA events around each launch)

def time_each(fn, torch, iters, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for i in range(iters):
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    ms = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    return dict(n=iters, median_us=pct(ms, 50) * 1e3, p90_us=pct(ms, 90) * 1e3, p99_us=pct(ms, 99) * 1e3,
                min_us=min(ms) * 1e3)


def bandwidth(torch, copy_gib, read_gib):
    out = {}
    n = int(copy_gib * (1 << 30))
    a = torch.empty(n, dtype=torch.uint8, device="cuda")
    a.random_(0, 255)
    b = torch.empty_like(a)
    t = time_each(lambda: b.copy_(a), torch, 20, 3)
    out["copy"] = dict(bytes_per_iter=2 * n, note="bytes read + written per copy", **t,
                       tbps=2 * n / (t["median_us"] * 1e-6) / 1e12)
    del a, b
    m = int(read_gib * (1 << 30)) // 2
    x = torch.randn(m, dtype=torch.bfloat16, device="cuda")
    t = time_each(lambda: torch.sum(x), torch, 20, 3)
    out["read_sum"] = dict(bytes_per_iter=2 * m, note="torch.sum over a bf16 tensor (bytes read)", **t,
                           tbps=2 * m / (t["median_us"] * 1e-6) / 1e12)
    del x
    torch.cuda.empty_cache()
    return out


# ----------------------------------------------------------------------------------------------
# Bytes per step, from the metadata

def step_bytes(meta, context):
    cv = meta["config_values"]
    w = 0
    parts = {}
    for t in meta["tensors"]:
        if t.get("kind") != "weight":
            continue
        if t["name"] == "embed_tokens" or t.get("sources") == ["model.embed_tokens.weight"] and "embed" in t["name"]:
            b = t["bytes"] // int(t["shape"][0])  # one row
            parts["embedding_row"] = b
        else:
            b = int(t["bytes"])
        w += b
    kv = 2 * int(cv["layers"]) * int(cv["kv_heads"]) * int(cv["head_dim"]) * int(context) * 2
    return w + kv, dict(weights=w, kv_cache=kv, **parts)


# ----------------------------------------------------------------------------------------------
# The model (as gpu_parity.py builds it) and the short parity check

def build_model(args, meta, torch, transformers):
    cv = meta["config_values"]
    cfg, rope = gp.make_config(cv, torch, transformers)
    from transformers import LlamaForCausalLM
    torch.manual_seed(args.seed)
    with torch.device("cuda"):
        model = LlamaForCausalLM(cfg)
    gp.reinit(model, args.seed, "cuda", torch)
    model = model.to(torch.bfloat16)
    wdir = os.path.join(args.work, f"{args.name}-weights")
    shutil.rmtree(wdir, ignore_errors=True)
    try:
        model.save_pretrained(wdir, max_shard_size=args.max_shard_size)
    except TypeError:
        model.save_pretrained(wdir)
    total = sum(p.numel() * p.element_size() for p in model.parameters())
    if not os.path.exists(os.path.join(wdir, "model.safetensors.index.json")) and total > gp.size_to_bytes(args.max_shard_size):
        gp.shard_manually(wdir, gp.size_to_bytes(args.max_shard_size), torch)
    n = sum(p.numel() for p in model.parameters())
    del model
    torch.cuda.empty_cache()
    return wdir, dict(dir=wdir, seed=args.seed, parameters=n, bytes=total, rope_form=rope["form"],
                      init="as scripts/gpu_parity.py (reinit, seed --seed, bf16, save_pretrained)")


def mkrt_args(args):
    return types.SimpleNamespace(mkrt=args.mkrt, ptx=args.ptx, mkrt_timeout=args.mkrt_timeout)


def short_parity(args, meta, wdir, torch):
    cv = meta["config_values"]
    gen = torch.Generator().manual_seed(args.seed + 1)
    tokens = torch.randint(0, int(cv["vocab"]), (args.parity_steps,), generator=gen).tolist()
    npy = os.path.join(args.work, "parity_mkdsl.npy")
    info, _ = gp.run_mkrt(mkrt_args(args), wdir, tokens, 0, npy, os.path.join(args.out, "mkrt_parity.log"),
                          meta=args.meta)
    res = dict(source="short parity in bench.py", steps=args.parity_steps, tokens=tokens, mkrt=info,
               gate=gp.REL_L2_GATE, reference="transformers float32 (TF32 off), eager attention")
    if info["exit_status"] != 0 or not os.path.exists(npy):
        res.update(passed=False, error="mkrt-run failed")
        return res
    mk = np.load(npy)
    prev = (torch.get_float32_matmul_precision(), torch.backends.cuda.matmul.allow_tf32)
    torch.set_float32_matmul_precision("highest")
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        m = gp.load_model(wdir, torch.float32, torch).to("cuda").eval()
        ref, _, _, _ = gp.hf_decode(m, tokens, "cuda", torch, full=False)
        del m
        torch.cuda.empty_cache()
    finally:
        torch.set_float32_matmul_precision(prev[0])
        torch.backends.cuda.matmul.allow_tf32 = prev[1]
    s = gp.summarize(gp.compare(mk, ref), gp.REL_L2_GATE)
    res.update(summary=s, passed=bool(s["passed"]))
    return res


def parity_from_json(path):
    p = json.load(open(path))
    c = p.get("comparisons", {}).get("mkdsl_vs_hf_f32", {}).get("all", {})
    return dict(source=path, passed=bool(p.get("passed")), steps=p.get("steps"),
                worst_rel_l2=c.get("worst_rel_l2"), gate=c.get("gate"), name=p.get("name"),
                command=p.get("command"))


# ----------------------------------------------------------------------------------------------
# mkdsl

def mkdsl_at(args, meta, wdir, c):
    cv = meta["config_values"]
    max_seq = int(cv["max_seq"])
    n_new = args.decode_steps + 1
    prompt = min(c - args.decode_steps // 2, max_seq + 1 - n_new)
    if prompt < 1:
        raise RuntimeError(f"context {c} too small for {args.decode_steps} decode steps")
    rng = np.random.default_rng(args.seed + 100 + c)
    tokens = rng.integers(0, int(cv["vocab"]), prompt).tolist()
    info, _ = gp.run_mkrt(mkrt_args(args), wdir, tokens, n_new, None,
                          os.path.join(args.out, f"mkrt_c{c}.log"), meta=args.meta)
    info = {k: v for k, v in info.items()}
    info.update(prompt_tokens=prompt, max_new=n_new, decode_positions=[prompt, prompt + n_new - 2],
                note="per-token latency: CUDA events around each decode step's launch (mkrt-run)")
    return info


# ----------------------------------------------------------------------------------------------
# PyTorch

def make_static_cache(model, max_len, torch):
    from transformers import StaticCache
    tries = [dict(config=model.config, max_cache_len=max_len),
             dict(config=model.config, max_batch_size=1, max_cache_len=max_len, device="cuda", dtype=torch.bfloat16),
             dict(config=model.config, batch_size=1, max_cache_len=max_len, device="cuda", dtype=torch.bfloat16)]
    errs = []
    for kw in tries:
        try:
            return StaticCache(**kw), sorted(k for k in kw if k != "config")
        except TypeError as e:
            errs.append(str(e))
    raise RuntimeError("StaticCache: " + "; ".join(errs))


def torch_at(args, model, c, torch, compile_ok, rec):
    """Eager, eager+graph and compile+graph decode steps at position c; fills rec."""
    cv_vocab = model.config.vocab_size
    # c + 64, not c + 1: the 2026-11-29 run (transformers 5.17) hit a device-side assert
    # (index_copy_ out of bounds) writing position c into a StaticCache made with c + 1; the cache's
    # real length is read back after the prefill and checked before any decode step.
    max_len = c + args.cache_slack
    cache, cache_kw = make_static_cache(model, max_len, torch)
    rec["static_cache"] = dict(max_cache_len=max_len, constructor_args=cache_kw, cls=type(cache).__name__)
    g = torch.Generator(device="cuda").manual_seed(args.seed + 200 + c)
    ids = torch.randint(0, cv_vocab, (1, c), device="cuda", generator=g)
    with torch.no_grad():
        model(input_ids=ids, past_key_values=cache, cache_position=torch.arange(c, device="cuda"), use_cache=True)
    torch.cuda.synchronize()
    real = None
    for get in (lambda: cache.layers[0].keys.shape, lambda: cache.key_cache[0].shape):
        try:
            real = list(get())
            break
        except Exception:  # noqa: BLE001
            continue
    rec["static_cache"]["key_shape_after_prefill"] = real
    if real is not None and real[-2] <= c:
        raise RuntimeError(f"the StaticCache holds {real[-2]} positions after the prefill; position {c} does not fit")
    tok = torch.randint(0, cv_vocab, (1, 1), device="cuda", generator=g)
    pos = torch.tensor([c], device="cuda")
    pid = pos.view(1, 1).clone()

    def step_with(fwd):
        def f():
            return fwd(input_ids=tok, past_key_values=cache, cache_position=pos, position_ids=pid,
                       use_cache=True).logits
        return f

    def graphed(fn):
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        gr = torch.cuda.CUDAGraph()
        with torch.cuda.graph(gr):
            fn()
        torch.cuda.synchronize()
        return gr

    with torch.no_grad():
        eager = step_with(model)
        try:
            rec["eager"] = time_each(eager, torch, args.replays, 10)
        except Exception as e:  # noqa: BLE001
            rec["eager"] = dict(error=f"{type(e).__name__}: {e}", traceback=traceback.format_exc()[-1500:])
        try:
            gr = graphed(eager)
            rec["eager_graph"] = time_each(gr.replay, torch, args.replays, 10)
            del gr
        except Exception as e:  # noqa: BLE001
            rec["eager_graph"] = dict(error=f"{type(e).__name__}: {e}", traceback=traceback.format_exc()[-1500:])
        if not compile_ok:
            return
        left = args.deadline_s - elapsed()
        need = args.compile_budget_s if rec.get("first_compile", True) else args.compile_budget_s / 3
        if left < need:
            rec["compile"] = dict(error=f"skipped: {left:.0f} s of the {args.deadline_s} s deadline left, "
                                        f"a compile needs about {need:.0f} s")
            return
        t0 = time.time()
        try:
            cfwd = torch.compile(model.forward, mode="max-autotune-no-cudagraphs", dynamic=False)
            cstep = step_with(cfwd)
            cstep()
            torch.cuda.synchronize()
            compile_s = time.time() - t0
            try:
                gr = graphed(cstep)
                rec["compile"] = dict(graph=True, compile_s=round(compile_s, 1),
                                      **time_each(gr.replay, torch, args.replays, 10))
                del gr
            except Exception as e:  # noqa: BLE001 - time it without the graph, say so
                rec["compile"] = dict(graph=False, graph_error=f"{type(e).__name__}: {e}",
                                      compile_s=round(compile_s, 1),
                                      **time_each(cstep, torch, args.replays, 10))
        except Exception as e:  # noqa: BLE001
            rec["compile"] = dict(error=f"{type(e).__name__}: {e}", seconds=round(time.time() - t0, 1),
                                  traceback=traceback.format_exc()[-3000:])
    del cache
    torch.cuda.empty_cache()


# ----------------------------------------------------------------------------------------------

def table(doc):
    rows = ["| model | context | step bytes | floor µs (copy bw) | mkdsl µs (p99) | % of copy bw | "
            "torch.compile+graph µs | torch eager µs | eager+graph µs | speed-up vs compile |",
            "|---|---|---|---|---|---|---|---|---|---|"]

    def f(x, spec=".1f"):
        return "n/a" if x is None else format(x, spec)
    for r in doc["results"]:
        rows.append(f"| {r['model']} | {r['context']} | {r['step_bytes'] / 1e9:.3f} GB | {f(r.get('floor_us'))} | "
                    f"{f(r['mkdsl_us'])} ({f(r['mkdsl_p99_us'])}) | {f(r['pct_of_copy_bw'])} | "
                    f"{f(r['torch_compile_us'])} | {f(r['torch_eager_us'])} | {f(r.get('torch_eager_graph_us'))} | "
                    f"{f(r['speedup_vs_torch_compile'], '.3f')} |")
    return "\n".join(rows)


def finish(args, doc):
    copy = doc.get("bandwidth", {}).get("copy", {}).get("tbps")
    results = []
    for c in args.contexts:
        sb, parts = step_bytes(doc["_meta"], c)
        mk = doc["mkdsl"].get(str(c), {}).get("decode_ms") or {}
        tr = doc["torch"].get(str(c), {})
        mk_us = mk.get("median") * 1e3 if mk.get("median") is not None else None
        comp = tr.get("compile", {})
        comp_us = comp.get("median_us")
        r = dict(model=args.name, context=c, step_bytes=sb, step_bytes_parts=parts, copy_tbps=copy,
                 floor_us=(sb / (copy * 1e12) * 1e6) if copy else None,
                 mkdsl_us=mk_us, mkdsl_p99_us=mk.get("p99") * 1e3 if mk.get("p99") is not None else None,
                 mkdsl_p90_us=mk.get("p90") * 1e3 if mk.get("p90") is not None else None,
                 mkdsl_decode_steps=mk.get("steps"),
                 mkdsl_decode_positions=doc["mkdsl"].get(str(c), {}).get("decode_positions"),
                 torch_compile_us=comp_us, torch_compile_p99_us=comp.get("p99_us"),
                 torch_compile_graph=comp.get("graph"), torch_compile_error=comp.get("error"),
                 torch_eager_us=tr.get("eager", {}).get("median_us"),
                 torch_eager_p99_us=tr.get("eager", {}).get("p99_us"),
                 torch_eager_graph_us=tr.get("eager_graph", {}).get("median_us"),
                 torch_eager_graph_error=tr.get("eager_graph", {}).get("error"),
                 pct_of_copy_bw=(sb / (mk_us * 1e-6) / (copy * 1e12) * 100) if (mk_us and copy) else None,
                 torch_compile_pct_of_copy_bw=(sb / (comp_us * 1e-6) / (copy * 1e12) * 100) if (comp_us and copy) else None,
                 speedup_vs_torch_compile=(comp_us / mk_us) if (mk_us and comp_us) else None,
                 parity_ok=doc.get("parity", {}).get("passed"),
                 gpu=doc["gpu"], driver=doc["driver"], clocks=doc["clocks_before"], command=doc["command"])
        results.append(r)
    doc["results"] = results
    out = {k: v for k, v in doc.items() if not k.startswith("_")}
    out["elapsed_s"] = round(elapsed(), 1)
    with open(os.path.join(args.out, "bench.json"), "w") as f:
        json.dump(out, f, indent=1)
    md = ["# mkdsl decode step time vs PyTorch (scripts/bench.py)", "", "```", doc["command"], "```", "",
          f"- GPU: {doc['gpu']}, driver {doc['driver']}", f"- clocks before: {doc['clocks_before']}",
          f"- clocks after: {doc.get('clocks_after', 'n/a')}",
          f"- copy bandwidth: {copy and round(copy, 3)} TB/s (read+written); torch.sum read stream: "
          f"{doc.get('bandwidth', {}).get('read_sum', {}).get('tbps') and round(doc['bandwidth']['read_sum']['tbps'], 3)} TB/s",
          f"- parity: {doc.get('parity', {}).get('passed')} ({doc.get('parity', {}).get('source')})",
          f"- versions: {doc.get('versions')}", "", table(doc), ""]
    with open(os.path.join(args.out, "bench.md"), "w") as f:
        f.write("\n".join(md))
    return md


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--meta", required=True)
    ap.add_argument("--ptx", required=True)
    ap.add_argument("--mkrt", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--contexts", type=int, nargs="+", default=[512])
    ap.add_argument("--name", default="llama-3.2-1b")
    ap.add_argument("--model-dir", help="an existing safetensors folder (else the random model is built)")
    ap.add_argument("--parity-json", help="parity.json of gpu_parity.py for this kernel (else a short parity)")
    ap.add_argument("--parity-steps", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--decode-steps", type=int, default=256, help="mkdsl decode steps timed per context")
    ap.add_argument("--replays", type=int, default=300, help="PyTorch launches/replays timed per variant")
    ap.add_argument("--copy-gib", type=float, default=4.0)
    ap.add_argument("--read-gib", type=float, default=4.0)
    ap.add_argument("--cache-slack", type=int, default=64, help="PyTorch StaticCache length = context + this")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--compile-budget-s", type=float, default=150,
                    help="skip a first torch.compile when less than this is left before --deadline-s")
    ap.add_argument("--deadline-s", type=float, default=420, help="the script's own time budget")
    ap.add_argument("--max-shard-size", default="1GB")
    ap.add_argument("--work", default=os.environ.get("TMPDIR", "/tmp") + "/mkdsl-bench")
    ap.add_argument("--mkrt-timeout", type=int, default=120)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.work, exist_ok=True)

    import torch
    import transformers
    meta = json.load(open(args.meta))
    doc = dict(_meta=meta, command="python3 " + shlex.join(sys.argv),
               date_utc=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               gpu=torch.cuda.get_device_name(0),
               driver=smi("driver_version").splitlines()[-1].strip(),
               clocks_before=smi("clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem").replace("\n", "; "),
               versions=dict(python=platform.python_version(), torch=torch.__version__,
                             transformers=transformers.__version__, numpy=np.__version__),
               meta=args.meta, ptx=args.ptx, mk_config=meta.get("config"), grid=meta.get("grid"),
               block=meta.get("block"), config_values=meta.get("config_values"),
               contexts=args.contexts, mkdsl={}, torch={}, timings_s={}, errors=[])
    for c in args.contexts:
        if c + 1 > int(meta["config_values"]["max_seq"]) + 1:
            doc["errors"].append(f"context {c} exceeds max_seq")
    rc = 0

    def stage(name, fn):
        t0 = time.time()
        log(f"[bench {elapsed():6.1f} s] {name} ...")
        try:
            fn()
            ok = True
        except Exception as e:  # noqa: BLE001
            doc["errors"].append(f"{name}: {type(e).__name__}: {e}")
            log(traceback.format_exc())
            ok = False
        doc["timings_s"][name] = round(time.time() - t0, 1)
        finish(args, doc)
        log(f"[bench {elapsed():6.1f} s] {name}: {'ok' if ok else 'FAILED'} ({time.time() - t0:.1f} s)")
        return ok

    stage("bandwidth", lambda: doc.update(bandwidth=bandwidth(torch, args.copy_gib, args.read_gib)))
    wdir = args.model_dir

    def do_build():
        nonlocal wdir
        wdir, info = build_model(args, meta, torch, transformers)
        doc["weights"] = info
    if not wdir and not stage("build model", do_build):
        return 2

    def do_parity():
        doc["parity"] = parity_from_json(args.parity_json) if args.parity_json else short_parity(args, meta, wdir, torch)
    stage("parity", do_parity)

    for c in args.contexts:
        def do_mk(c=c):
            doc["mkdsl"][str(c)] = mkdsl_at(args, meta, wdir, c)
            if doc["mkdsl"][str(c)]["exit_status"] != 0:
                raise RuntimeError(f"mkrt-run exit {doc['mkdsl'][str(c)]['exit_status']}")
        stage(f"mkdsl c={c}", do_mk)

    model = None

    def do_load():
        nonlocal model
        from transformers import LlamaForCausalLM
        for key in ("dtype", "torch_dtype"):
            try:
                model = LlamaForCausalLM.from_pretrained(wdir, attn_implementation="sdpa", **{key: torch.bfloat16})
                break
            except TypeError:
                continue
        model = model.to("cuda").eval()
        doc["torch_model"] = dict(attn=model.config._attn_implementation, dtype=str(next(model.parameters()).dtype))
    if stage("torch load", do_load):
        first = True
        for c in args.contexts:
            rec = doc["torch"].setdefault(str(c), {})
            rec["first_compile"] = first

            def do_t(c=c, rec=rec):
                torch_at(args, model, c, torch, not args.no_compile, rec)
            stage(f"torch c={c}", do_t)
            rec.pop("first_compile", None)
            first = False

    doc["clocks_after"] = smi("clocks.sm,clocks.mem").replace("\n", "; ")
    md = finish(args, doc)
    if not args.model_dir:
        shutil.rmtree(wdir, ignore_errors=True)
    log("\n".join(md))
    par = doc.get("parity", {}).get("passed")
    mk_ok = all(r["mkdsl_us"] is not None and r["torch_compile_us"] is not None and r["torch_eager_us"] is not None
                for r in doc["results"])
    parts = [f"c={r['context']}: mkdsl {r['mkdsl_us'] and round(r['mkdsl_us'])} µs "
             f"({r['pct_of_copy_bw'] and round(r['pct_of_copy_bw'], 1)}% of copy bw), torch.compile "
             f"{r['torch_compile_us'] and round(r['torch_compile_us'])} µs, eager "
             f"{r['torch_eager_us'] and round(r['torch_eager_us'])} µs" for r in doc["results"]]
    if par is not True:
        rc = 1
    if not mk_ok:
        rc = 2 if rc == 0 else rc
    log(f"BENCH {args.name}: {'PASS' if rc == 0 else 'FAIL'}: parity {par}; copy "
        f"{doc['results'][0]['copy_tbps'] and round(doc['results'][0]['copy_tbps'], 2)} TB/s; " + "; ".join(parts))
    return rc


if __name__ == "__main__":
    sys.exit(main())
