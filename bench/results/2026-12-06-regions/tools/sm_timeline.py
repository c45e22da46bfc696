#!/usr/bin/env python3
"""Per-SM listing of a traced prefill step (mk-prefill-check --trace): each task and each wait
between START_US and END_US on a few SMs (the first six, three in the middle, the last three), in
time order, so that a wait's place in the chain shows (the q/k/v tasks of one KV head waiting for
each other, bench/NOTES.md 28).

    python3 sm_timeline.py TRACE.json START_US END_US
"""
import collections
import json
import sys

doc = json.load(open(sys.argv[1]))
lo, hi = float(sys.argv[2]), float(sys.argv[3])
events = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("pid") == 0 and lo <= e["ts"] <= hi]
by_sm = collections.defaultdict(list)
for e in events:
    by_sm[e["tid"]].append(e)
sms = sorted(by_sm)
for sm in sms[:6] + sms[60:63] + sms[-3:]:
    print(f"SM {sm}:")
    for e in sorted(by_sm[sm], key=lambda e: e["ts"]):
        print(f"   {e.get('cat', 'task'):5s} {e['name'][:26]:26s} node {e['args'].get('node', '-')!s:4s} "
              f"ts {e['ts']:8.1f} dur {e['dur']:7.2f}")
