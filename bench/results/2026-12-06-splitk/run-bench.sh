# Issue 18, on this change's kernels (scripts/gpu-prepare.sh): the 8B's prefill parity on its new
# tiles (o and down 128 x 128 in two parts), then bench.py's prefill rows for the 1B: time to first
# token of 128-, 512- and 2048-token prompts against torch.compile + CUDA graph and eager.
X=/tmp/extra; rm -rf $X; mkdir -p $X
OUT=/tmp/o-par CHECKS="env prefill-parity-llama.llama_3_8b" GPU_CHECK_BUDGET_S=200 bash scripts/gpu-check.sh > $X/parity8b.log 2>&1
cp /tmp/o-par/summary.md $X/8b-parity-summary.md; tar -czf $OUT/extra.tar.gz -C $X .
CHECKS="env benchmark" BENCH_MODELS="llama-3.2-1b" BENCH_PREFILL="128 512 2048" BENCH_SKIP_DECODE=1 \
  GPU_CHECK_BUDGET_S=260 bash scripts/gpu-check.sh
grep "^|" $X/8b-parity-summary.md
