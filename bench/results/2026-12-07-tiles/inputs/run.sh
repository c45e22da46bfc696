#!/bin/bash
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=$(seq -s, 1 40); T=$(seq -s, 1 512)
for b in old new; do
  echo "== tiny $b prefill:   $(./mkrt-run-$b --ptx tiny.ptx --random-weights 1 --tokens $S --max-new 8 2>/dev/null)"
  echo "== tiny $b decode:    $(./mkrt-run-$b --ptx tiny.ptx --random-weights 1 --tokens $S --max-new 8 --no-prefill 2>/dev/null)"
done
for r in 1 2 3; do
  for b in old new; do
    for w in 0 2; do
      echo "== 1b $b round $r warmup $w"
      ./mkrt-run-$b --ptx llama1b.ptx --random-weights 1 --tokens $T --max-new 32 --warmup $w 2>&1 | grep -v "^$"
    done
  done
done
