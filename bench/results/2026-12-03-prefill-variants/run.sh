#!/usr/bin/env bash
# The device run of 2026-12-03 (bench/results/2026-12-03-prefill-variants): the tiny prefill check
# at the committed stdlib, then the 1B prefill variants, interleaved, 512 tokens.
cd "$(dirname "$0")"
chmod +x mk-prefill-check
for n in a b c d t n nt; do gunzip -f pf_$n.ptx.gz; done
./mk-prefill-check --prefill prefill.ptx --decode tiny.ptx --weights ../tests/data/tiny_llama.safetensors \
  --tokens ../tests/data/tiny_llama_tokens.txt --golden-f32 ../tests/data/tiny_llama_logits_f32.npy
for round in 1 2; do
  for n in a n b c d; do
    echo "== round $round variant $n"
    timeout 100 ./mk-prefill-check --prefill pf_$n.ptx --random-weights 7 --time-tokens 512 --runs 3 | tail -1
  done
done
echo "== traced a"
timeout 100 ./mk-prefill-check --prefill pf_t.ptx --random-weights 7 --time-tokens 128 --runs 1 --trace "$OUT/trace_1b_chunk1.json" | grep -v "trace:   SM" | head -60
echo "== traced n (no row logits)"
timeout 100 ./mk-prefill-check --prefill pf_nt.ptx --random-weights 7 --time-tokens 128 --runs 1 --trace "$OUT/trace_1b_nohead_chunk1.json" | grep -v "trace:   SM" | head -60
