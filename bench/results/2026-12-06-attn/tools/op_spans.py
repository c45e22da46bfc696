#!/usr/bin/env python3
"""Per-op summary of a traced prefill step (mk-prefill-check --trace): for each op, the median over
layers of its node's span (first task ready to last task end) and of its tasks' durations, and for
ONE op (--durations OP) the histogram of its task durations in 1-us bins, so that tasks of 1, 2, 3
and 4 key blocks show as clusters (the per-iteration cost is the step between them).

    python3 op_spans.py TRACE.json [--durations attention_prefill]
"""
import argparse
import collections
import json
import statistics

ap = argparse.ArgumentParser()
ap.add_argument("trace")
ap.add_argument("--durations", default="attention_prefill")
a = ap.parse_args()
doc = json.load(open(a.trace))
tasks = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("pid") == 0 and e.get("cat") not in ("wait",)]
by_node = collections.defaultdict(list)
for e in tasks:
    by_node[(e["cat"], e["args"]["node"])].append(e)
by_op = collections.defaultdict(list)
for (op, node), es in by_node.items():
    start = min(e["ts"] for e in es)
    end = max(e["ts"] + e["dur"] for e in es)
    by_op[op].append((end - start, statistics.median(e["dur"] for e in es), len(es)))
total = max(e["ts"] + e["dur"] for e in tasks) - min(e["ts"] for e in tasks)
print(f"step span {total:.1f} us")
print(f"{'op':28s} {'nodes':>5s} {'tasks':>5s} {'span med':>9s} {'task med':>9s}")
for op, rows in sorted(by_op.items(), key=lambda kv: -sum(r[0] for r in kv[1])):
    print(f"{op:28s} {len(rows):5d} {rows[0][2]:5d} {statistics.median(r[0] for r in rows):9.2f} "
          f"{statistics.median(r[1] for r in rows):9.2f}")
d = [e["dur"] for e in tasks if e["cat"] == a.durations]
if d:
    hist = collections.Counter(int(x) for x in d)
    print(f"\n{a.durations} task durations (us bin: count)")
    print(" ".join(f"{k}:{hist[k]}" for k in sorted(hist)))
