#!/usr/bin/env python3
"""Where the kernel's warps stall, from an Nsight Compute source page (SASS with sampling).

    ncu -k mk_step --launch-skip 40 --launch-count 1 --section WarpStateStats --section SourceCounters \\
        -o prof build-gpu/mkrt-run --ptx build-gpu/llama1b.ptx --random-weights 3 --tokens ... --max-new 0
    ncu -i prof.ncu-rep --page source --csv --print-source sass > sass.csv
    python3 scripts/ncu_stalls.py sass.csv [--top 20]

Prints the stall reasons over all samples; then the samples grouped by how often an instruction
ran (instructions that run equally often are mostly one op's code: per-task code runs tasks x warps
times, a loop body tasks x trips x warps times), each group's main reasons; then the instructions
with the most excess shared-memory wavefronts (bank conflicts). Standard library only.
"""
import argparse
import collections
import csv
import sys

REASONS = ["barrier", "long_sb", "short_sb", "mio", "wait", "selected", "not_selected", "branch_resolving",
           "no_inst", "math", "dispatch", "membar", "lg", "drain", "imc", "misc", "sleep", "tex"]


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", help="ncu --page source --csv --print-source sass output")
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args()
    rows = list(csv.reader(open(args.csv, newline="")))
    header_at = next((i for i, r in enumerate(rows) if r and r[0] == "Address"), None)
    if header_at is None:
        sys.exit(f"{args.csv}: no 'Address' header row (is it ncu's source page as CSV?)")
    col = {h: i for i, h in enumerate(rows[header_at])}
    data = rows[header_at + 1:]

    def get(r, name):
        return number(r[col[name]]) if name in col and col[name] < len(r) else 0.0

    samples = "Warp Stall Sampling (All Samples)"
    total = sum(get(r, samples) for r in data) or 1.0
    print(f"{len(data)} SASS instructions, {total:.0f} samples")
    print("\nstall reason            samples   share")
    by_reason = {k: sum(get(r, "stall_" + k) for r in data) for k in REASONS}
    for k, v in sorted(by_reason.items(), key=lambda kv: -kv[1]):
        if v:
            print(f"  {k:20s} {v:9.0f} {100 * v / total:6.1f}%")

    groups = collections.Counter()
    reasons = collections.defaultdict(collections.Counter)
    for r in data:
        n = int(get(r, "Instructions Executed"))
        groups[n] += get(r, samples)
        for k in REASONS:
            reasons[n][k] += get(r, "stall_" + k)
    print("\nruns per instruction   samples   share   main reasons")
    for n, v in groups.most_common(args.top):
        main_reasons = ", ".join(f"{k} {100 * c / v:.0f}%" for k, c in reasons[n].most_common(3) if c) if v else ""
        print(f"  {n:10d}        {v:9.0f} {100 * v / total:6.1f}%   {main_reasons}")

    excess = "L1 Wavefronts Shared Excessive"
    if excess in col:
        worst = sorted(data, key=lambda r: -get(r, excess))[:args.top]
        print("\nshared-memory excess wavefronts (of all wavefronts), per instruction")
        for r in worst:
            if get(r, excess) <= 0:
                break
            print(f"  {r[0][-6:]}  {get(r, excess):10.0f} of {get(r, 'L1 Wavefronts Shared'):10.0f}  {r[1].strip()[:60]}")


if __name__ == "__main__":
    main()
