#!/usr/bin/env python3
"""Per-node timeline of one traced step (the Chrome trace of `mkrt-run --trace` / `mkdsl run --trace`).

For each node (op instance) in step order: its task count, when its first task was ready and its
last task ended (µs from the step's start), the span between them, the gap from the previous
node's last end (negative: they overlap), the median and longest task, and the most tasks any SM
ran. The runtime's own summary gives per-op totals; this shows the critical path layer by layer.

    python3 scripts/trace_nodes.py TRACE.json [--first N] [--last N]
"""
import argparse
import collections
import json
import statistics


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("--first", type=int, default=14, help="nodes to print from the start (default 14)")
    ap.add_argument("--last", type=int, default=3, help="nodes to print from the end (default 3)")
    args = ap.parse_args()
    doc = json.load(open(args.trace))
    tasks = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") != "wait"]
    by_node = collections.defaultdict(list)
    for e in tasks:
        by_node[e["args"]["node"]].append(e)
    rows = []
    for node, es in sorted(by_node.items()):
        ready = min(e["ts"] for e in es)
        end = max(e["ts"] + e["dur"] for e in es)
        durs = [e["dur"] for e in es]
        per_sm = collections.Counter(e["tid"] for e in es)
        rows.append((es[0]["name"], len(es), ready, end, statistics.median(durs), max(durs), max(per_sm.values())))
    shown = rows if len(rows) <= args.first + args.last else rows[:args.first] + [None] + rows[-args.last:]
    print(f"{'node':28s} {'tasks':>5s} {'ready':>8s} {'end':>8s} {'span':>6s} {'gap':>6s} {'med':>6s} {'max':>6s} {'/SM':>4s}")
    prev_end = 0.0
    for r in shown:
        if r is None:
            print("...")
            continue
        name, n, ready, end, med, mx, per = r
        print(f"{name:28s} {n:5d} {ready:8.1f} {end:8.1f} {end - ready:6.1f} {ready - prev_end:6.1f} {med:6.2f} {mx:6.2f} {per:4d}")
        prev_end = end


if __name__ == "__main__":
    main()
