# Issue 18, a third call: the step's inputs through a page-locked staging buffer copied
# asynchronously before the launch (mkrt-run-new, this change) against two synchronous pageable
# copies (mkrt-run-old, ff74cac's runtime): the tiny model's generated ids with and without prefill
# for both, then three interleaved rounds of a 512-token prompt and 32 new tokens, fresh and after
# two warm-up runs (time to first token and per-token wall clock); then the 1B's time to first token
# at 512 and 128 tokens against torch.compile (bench.py; a longer budget, so torch.compile compiles).
#   build/stagingcheck/: mkrt-run-old and -new built here, llama1b and tiny kernels of ff74cac.
X=/tmp/extra3; rm -rf $X; mkdir -p $X
save() { tar -czf $OUT/extra3.tar.gz -C $X .; }
timeout 150 bash build/stagingcheck/run.sh > $X/inputs.log 2>&1; save
grep -E "^== tiny|first token|per token|tok/s" $X/inputs.log | cut -c1-200
CHECKS="env benchmark" BENCH_MODELS="llama-3.2-1b" BENCH_PREFILL="512 128" BENCH_SKIP_DECODE=1 GPU_CHECK_BUDGET_S=270 bash scripts/gpu-check.sh > $X/bench.log 2>&1
cp $OUT/summary.md $X/bench-summary.md; cp $OUT/bench.md $OUT/bench.json $X/ 2>/dev/null; save
grep -h "^| bench" $X/bench-summary.md | cut -c1-600; grep -h "llama-3.2-1b | 128 \|llama-3.2-1b | 512 " $X/bench.md
