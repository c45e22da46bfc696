#!/usr/bin/env bash
# Variant b (prefill_rows=32, prefill_k_chunk=128) without the row logits, 128 and 512 tokens, and
# its trace (bench/results/2026-12-03-prefill-variants).
cd "$(dirname "$0")"
chmod +x mk-prefill-check
gunzip -f pf_bn.ptx.gz pf_bnt.ptx.gz
for round in 1 2; do
  for n in 128 512; do
    echo "== round $round bn $n tokens"
    timeout 100 ./mk-prefill-check --prefill pf_bn.ptx --random-weights 7 --time-tokens $n --runs 3 | tail -1
  done
done
echo "== traced bn"
timeout 100 ./mk-prefill-check --prefill pf_bnt.ptx --random-weights 7 --time-tokens 128 --runs 1 --trace /tmp/t.json | grep -v "trace:   SM" | head -30
