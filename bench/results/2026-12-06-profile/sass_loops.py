#!/usr/bin/env python3
"""Per-loop figures of an Nsight Compute source page (SASS, CSV): for each backward branch, the
loop's share of the warp-state samples, its executed warp instructions and how often its back edge
ran, with its wgmma (HGMMA), exp (MUFU) and barrier counts. Usage: sass_loops.py sass.csv.gz"""
import csv, gzip, re, sys

rows = list(csv.reader(gzip.open(sys.argv[1], "rt")))
head, data = rows[1], rows[2:]
col = {n: i for i, n in enumerate(head)}
SAMPLES, EXECUTED = "Warp Stall Sampling (All Samples)", "Instructions Executed"


def num(r, name):
    try:
        return float(r[col[name]])
    except ValueError:
        return 0.0


total = sum(num(r, SAMPLES) for r in data)
where = {int(r[0], 16): i for i, r in enumerate(data)}
print("loop [first-last]  samples  warp instructions  back edges  HGMMA MUFU BAR")
for i, r in enumerate(data):
    m = re.search(r"BRA (0x[0-9a-f]+)", r[1])
    if not m or where.get(int(m.group(1), 16), i) >= i:
        continue
    body = data[where[int(m.group(1), 16)]: i + 1]
    share = sum(num(x, SAMPLES) for x in body) / total
    if share < 0.004:
        continue
    count = lambda op: sum(op in x[1] for x in body)
    print(f"[{where[int(m.group(1), 16)]}-{i}] {share * 100:5.1f}% {sum(num(x, EXECUTED) for x in body) / 1e6:8.1f}M "
          f"{num(r, EXECUTED):10.0f}  {count('HGMMA'):3d} {count('MUFU'):3d} {count('BAR.SYNC'):3d}")
