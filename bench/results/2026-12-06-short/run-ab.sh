# Issue 18, one call: the prefill step's tiles A/B (llama1b: the committed 1B kernel; v-q32: q/k/v
# tasks of 32 pairs; v-d256: o and down tasks of 128 x 256 in 4 parts of K; v-qd: both; v-k64: a
# K chunk of 64, four copy stages instead of two; v-k64qd: with the wider tiles; v-a128, v-a128k64:
# attention blocks of 128 queries and 128 or 64 keys; v-ch2: products in two accumulator chains),
# three interleaved rounds of three 512-token prefills; then the short step (prefill_short, 128
# tokens) against the whole 512-token chunk a 128-token prompt ran before it.
#   VARIANTS="q32:--set prefill_qkv_cols=32;d256:--set prefill_cols=256 --set prefill_splits=4;qd:--set prefill_qkv_cols=32 --set prefill_cols=256 --set prefill_splits=4;k64:--set prefill_k_chunk=64;k64qd:--set prefill_k_chunk=64 --set prefill_qkv_cols=32 --set prefill_cols=256 --set prefill_splits=4;a128:--set prefill_queries=128 --set prefill_keys=128;a128k64:--set prefill_queries=128 --set prefill_keys=64;ch2:--mma-chains 2" bash scripts/gpu-prepare.sh
G=build-gpu; X=/tmp/extra; rm -rf $X; mkdir -p $X
save() { tar -czf $OUT/extra.tar.gz -C $X .; }
CHECKS="env prefill prefill-ab" PREFILL_AB_ROUNDS=3 GPU_CHECK_BUDGET_S=240 bash scripts/gpu-check.sh > $X/ab.log 2>&1
cp $OUT/summary.md $X/ab-summary.md; save
grep -h "^|" $X/ab-summary.md | cut -c1-220
for r in 1 2; do
  for s in prefill_short prefill; do
    timeout 60 $G/mk-prefill-check --kernel $G/llama1b.ptx --random-weights 7 --time-tokens 128 --runs 5 --step $s > $X/t128-$s-$r.log 2>&1
    echo "$s round $r: $(tail -1 $X/t128-$s-$r.log)"
  done
done
save
