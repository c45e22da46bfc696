#!/usr/bin/env python3
"""The matrix product alone (issue 18): bench/mma/proj.mk's kernels against torch.matmul, on one GPU.

Runs on the GPU machine (torch, safetensors, numpy; no network):

    python3 scripts/bench_mma.py --mkrt build-gpu/mkrt-run --out DIR \\
        --kernel qkv build-gpu/mma_proj_qkv.ptx [--kernel o build-gpu/mma_proj_o.ptx ...] [--rounds 3]

For each kernel (a config of bench/mma/proj.mk: y = x w^T, x[T, K] and w[N, K] bf16, y bf16, its
T, K and N read from the sidecar's config_values):
  1. Random bf16 x (N(0, 1)), w (N(0, 1/K)) and v (N(0, 1)) from --seed, saved as safetensors.
  2. Parity: every mkrt-run step's logits are y v, which must match torch's (x w^T, rounded to
     bf16 as cuBLAS rounds its output, times v, in float32) within --gate relative L2.
  3. Timing, --rounds rounds, each side once a round, interleaved (mkdsl, torch, mkdsl, ...):
     - mkdsl: `mkrt-run --tokens 0 --max-new --steps`, the median of its per-token latency (CUDA
       events around each step's launch). A step is the whole kernel: the product plus `touch`
       (one 16-element row) and `check` (y v: reads y once more, 2 T N bytes), so it slightly
       overstates the product's time;
     - torch: torch.matmul(x, w.T) in bf16 (cuBLAS), CUDA events, the median of --steps after a
       warm-up.
     Reported: the median of the rounds' medians and their min-max, and TFLOP/s (2 T N K flops)
     from the medians.
Writes DIR/bench_mma.json (rewritten after each kernel) and DIR/bench_mma.md. Exit status 1 when a
parity check failed or a side did not run.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import time_each  # noqa: E402  (CUDA events around each call, after a warm-up)


def median(v):
    return float(np.median(np.array(v, dtype=np.float64)))


def run_mkrt(args, ptx, wdir, log):
    cmd = [args.mkrt, "--ptx", ptx, "--weights", wdir, "--tokens", "0", "--max-new", str(args.steps),
           "--dump-logits", log + ".npy"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    with open(log, "w") as f:
        f.write(" ".join(cmd) + "\n" + p.stdout + p.stderr)
    if p.returncode != 0:
        raise RuntimeError(f"mkrt-run exit {p.returncode}: {p.stderr.strip()[-400:]}")
    m = re.search(r"per-token latency \((\d+) decode steps, [^)]*\): median ([0-9.]+) ms", p.stderr)
    if not m:
        raise RuntimeError("no per-token latency line in mkrt-run's output")
    return float(m.group(2)) * 1e3, np.load(log + ".npy")


def one(args, torch, name, ptx):
    meta = json.load(open(os.path.splitext(ptx)[0] + ".meta.json"))
    cv = meta["config_values"]
    T, K, N = int(cv["tokens"]), int(cv["k"]), int(cv["n"])
    rec = dict(kernel=name, ptx=ptx, tokens=T, k=K, n=N, flops=2 * T * N * K,
               tiles=dict(rows=cv.get("rows"), cols=cv.get("cols"), chunk=cv.get("chunk")))
    from safetensors.torch import save_file
    g = torch.Generator(device="cpu").manual_seed(args.seed)
    x = torch.randn(T, K, generator=g).to(torch.bfloat16)
    w = (torch.randn(N, K, generator=g) / K ** 0.5).to(torch.bfloat16)
    v = torch.randn(N, generator=g).to(torch.bfloat16)
    wdir = tempfile.mkdtemp(prefix=f"mma_{name}_")
    save_file({"x": x.contiguous(), "w": w.contiguous(), "v": v.contiguous()}, os.path.join(wdir, "model.safetensors"))
    xd, wd, vd = x.cuda(), w.cuda(), v.cuda()
    y = torch.matmul(xd, wd.T)
    ref = (y.float() @ vd.float()).cpu().numpy()
    mk, tc = [], []
    logits = None
    for r in range(args.rounds):
        us, logits = run_mkrt(args, ptx, wdir, os.path.join(args.out, f"mkrt_{name}_r{r}.log"))
        mk.append(us)
        tc.append(time_each(lambda: torch.matmul(xd, wd.T), torch, args.steps, 10)["median_us"])
    errs = [float(np.linalg.norm(l - ref) / max(np.linalg.norm(ref), 1e-30)) for l in logits]
    rec.update(parity_rel_l2_worst=max(errs), parity_gate=args.gate, parity_ok=bool(max(errs) <= args.gate),
               rounds=args.rounds, steps=args.steps,
               mkdsl_us_median=median(mk), mkdsl_us_min=min(mk), mkdsl_us_max=max(mk), mkdsl_us_runs=mk,
               torch_matmul_us_median=median(tc), torch_matmul_us_min=min(tc), torch_matmul_us_max=max(tc),
               torch_matmul_us_runs=tc)
    rec["mkdsl_tflops"] = rec["flops"] / (rec["mkdsl_us_median"] * 1e-6) / 1e12
    rec["torch_matmul_tflops"] = rec["flops"] / (rec["torch_matmul_us_median"] * 1e-6) / 1e12
    rec["speedup"] = rec["torch_matmul_us_median"] / rec["mkdsl_us_median"]
    return rec


def table(doc):
    lines = ["| kernel | T x K x N | mkdsl step (µs, median, min-max) | TFLOP/s | torch.matmul (µs) | TFLOP/s | mkdsl / torch time | parity (rel L2) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in doc["kernels"]:
        if "error" in r:
            lines.append(f"| {r['kernel']} | | error: {r['error']} | | | | | |")
            continue
        lines.append(f"| {r['kernel']} | {r['tokens']} x {r['k']} x {r['n']} | {r['mkdsl_us_median']:.1f} "
                     f"({r['mkdsl_us_min']:.1f}-{r['mkdsl_us_max']:.1f}) | {r['mkdsl_tflops']:.0f} | "
                     f"{r['torch_matmul_us_median']:.1f} ({r['torch_matmul_us_min']:.1f}-{r['torch_matmul_us_max']:.1f}) | "
                     f"{r['torch_matmul_tflops']:.0f} | {1 / r['speedup']:.2f}x | "
                     f"{r['parity_rel_l2_worst']:.2e} {'ok' if r['parity_ok'] else 'FAIL'} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mkrt", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--kernel", nargs=2, action="append", metavar=("NAME", "PTX"), required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gate", type=float, default=1e-2)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    doc = dict(gpu=torch.cuda.get_device_name(0), torch=torch.__version__, kernels=[])
    ok = True
    for name, ptx in args.kernel:
        try:
            rec = one(args, torch, name, ptx)
            ok = ok and rec["parity_ok"]
        except Exception as e:  # recorded, the other kernels still run
            rec = dict(kernel=name, ptx=ptx, error=str(e)[-600:])
            ok = False
        doc["kernels"].append(rec)
        print(json.dumps(rec), flush=True)
        json.dump(doc, open(os.path.join(args.out, "bench_mma.json"), "w"), indent=1)
        open(os.path.join(args.out, "bench_mma.md"), "w").write(table(doc))
    print(table(doc))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
