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

    python3 scripts/trace_nodes.py TRACE.json [--first N] [--last N] [--account --copy-tbps 4.258 [--bound-op OP]]

With --account it then sums the step up by kind of node: nodes of one op that move the same bytes
(one per layer: a layer's o and down projections are both matvec_residual, told apart by their
bytes) are one row with their count, median span, the floor of their bytes at the copy bandwidth
(the compiler's est_bytes, activation re-reads that hit L2 included, over --copy-tbps) and what
the span has above it, per node and over the step. A node whose bytes are an upper bound
(attention up to pos; the trace's est_bytes_bound, in traces of runtimes since perf-6) has no floor.
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
    ap.add_argument("--account", action="store_true", help="also sum the step up by kind of node (see above)")
    ap.add_argument("--copy-tbps", type=float, default=None, help="copy bandwidth for --account's floors, TB/s")
    ap.add_argument("--bound-op", action="append", default=[], metavar="OP",
                    help="--account: OP's bytes are an upper bound (for traces written before est_bytes_bound)")
    args = ap.parse_args()
    if args.account and not args.copy_tbps:
        ap.error("--account needs --copy-tbps (the benchmark's copy_tbps)")
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
    kinds = collections.defaultdict(list)  # (op, node bytes) -> [(span, bytes are a bound)]
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
        kinds[(es[0]["args"]["op"], sum(e["args"].get("est_bytes", 0) for e in es))].append(
            (end - ready, es[0]["args"]["op"] in args.bound_op or any(e["args"].get("est_bytes_bound") for e in es)))
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
    if args.account:
        account(kinds, args.copy_tbps, rows[-1][3] - rows[0][2] if rows else 0.0)


def account(kinds, copy_tbps, step_us):
    """Per kind of node: count, median span, floor (bytes at the copy bandwidth), span above it."""
    print(f"\n{'op':24s} {'bytes/node':>12s} {'nodes':>5s} {'span':>7s} {'floor':>7s} {'over':>7s} {'x nodes':>8s}")
    total_span = total_floor = 0.0
    for (op, nbytes), spans in kinds.items():  # in step order of their first node
        span = statistics.median(s for s, _ in spans)
        bound = any(b for _, b in spans)
        floor = None if bound else nbytes / (copy_tbps * 1e6)  # bytes / (TB/s) in µs
        over = span - floor if floor is not None else None
        total_span += span * len(spans)
        total_floor += (floor or 0.0) * len(spans)
        f = lambda v: f"{v:7.1f}" if v is not None else f"{'-':>7s}"
        print(f"{op:24s} {nbytes:12d} {len(spans):5d} {span:7.1f} {f(floor)} {f(over)} {f(over * len(spans) if over is not None else None):>8s}")
    print(f"{'(sum of spans x nodes)':24s} {'':12s} {'':5s} {total_span:7.1f} {total_floor:7.1f} {total_span - total_floor:7.1f}"
          f"   step {step_us:.1f} us: first ready to last end")


if __name__ == "__main__":
    main()
