#!/usr/bin/env python3
"""Per-node timeline of one traced step (the Chrome trace of `mkrt-run --trace` / `mkdsl run --trace`).

For each node (op instance) in step order: its task count, when its first task was ready and its
last task ended (µs from the trace's origin), the span between them, the gap from the previous
node's last end (negative: they overlap), the median and longest task, the most tasks any SM
ran, the median time its tasks' compute threads waited for weight tiles in the shared-memory ring
(args.ring_wait_ns), and the median lead of the loader warp: a task's ready time minus the start
of its loader slice (when the loader issued its first tile copy; negative: after the task was
ready), "-" for a node that streams no weights. The runtime's own summary gives per-op totals;
this shows the critical path layer by layer.

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
    slices = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    # The tasks are pid 0's slices other than the waits; pid 1 holds the loader warps' slices,
    # one per task that streamed weights, found by the task's record index.
    tasks = [e for e in slices if e.get("pid") == 0 and e.get("cat") != "wait"]
    loader_start = {e["args"]["record"]: e["ts"] for e in slices if e.get("pid") == 1 and e.get("cat") == "loader"}
    by_node = collections.defaultdict(list)
    for e in tasks:
        by_node[e["args"]["node"]].append(e)
    rows = []
    prev_end = 0.0
    for node, es in sorted(by_node.items()):
        ready = min(e["ts"] for e in es)
        end = max(e["ts"] + e["dur"] for e in es)
        durs = [e["dur"] for e in es]
        per_sm = collections.Counter(e["tid"] for e in es)
        ring = [e["args"]["ring_wait_ns"] / 1000.0 for e in es if "ring_wait_ns" in e["args"]]
        leads = [e["ts"] - loader_start[e["args"]["record"]] for e in es if e["args"]["record"] in loader_start]
        rows.append((es[0]["name"], len(es), ready, end, ready - prev_end, statistics.median(durs), max(durs),
                     max(per_sm.values()), statistics.median(ring) if ring else None,
                     statistics.median(leads) if leads else None))
        prev_end = end
    shown = rows if len(rows) <= args.first + args.last else rows[:args.first] + [None] + rows[len(rows) - args.last:]
    print(f"{'node':28s} {'tasks':>5s} {'ready':>8s} {'end':>8s} {'span':>6s} {'gap':>6s} {'med':>6s} {'max':>6s} {'/SM':>4s}"
          f" {'ring':>6s} {'lead':>7s}")
    for r in shown:
        if r is None:
            print("...")
            continue
        name, n, ready, end, gap, med, mx, per, ring, lead = r
        ring_s = f"{ring:6.2f}" if ring is not None else f"{'-':>6s}"
        lead_s = f"{lead:7.2f}" if lead is not None else f"{'-':>7s}"
        print(f"{name:28s} {n:5d} {ready:8.1f} {end:8.1f} {end - ready:6.1f} {gap:6.1f} {med:6.2f} {mx:6.2f} {per:4d}"
              f" {ring_s} {lead_s}")


if __name__ == "__main__":
    main()
