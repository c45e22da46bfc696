# Issue 18, a second call: the 1B's prefill parity (now each of `prefill` and `prefill_short`
# then decode from its caches, besides prefill_logits' chunks), then time to first token at 128
# and 512 tokens against torch.compile (mkrt-run picks prefill_short for 128).
G=build-gpu; X=/tmp/extra2; rm -rf $X; mkdir -p $X
save() { tar -czf $OUT/extra2.tar.gz -C $X .; }
OUT=/tmp/o-par CHECKS="prefill-parity-llama.llama_3_2_1b" GPU_CHECK_BUDGET_S=110 bash scripts/gpu-check.sh > $X/parity.log 2>&1
cp /tmp/o-par/summary.md $X/parity-summary.md; cp /tmp/o-par/logs/prefill-parity-*.log $X/ 2>/dev/null; save
grep -h "^|" $X/parity-summary.md | grep -i parity | cut -c1-700
CHECKS="env benchmark" BENCH_MODELS="llama-3.2-1b" BENCH_PREFILL="128 512" BENCH_SKIP_DECODE=1 GPU_CHECK_BUDGET_S=250 bash scripts/gpu-check.sh > $X/bench.log 2>&1
cp $OUT/summary.md $X/bench-summary.md; save
grep -h "^|" $X/bench-summary.md | cut -c1-400; grep -h "prefill" $OUT/bench.md 2>/dev/null | head -10
