# Issue 18, a second call on the committed kernels (gpu-prepare.sh at ff74cac): the tiny model's
# GPU prefill checks (and under compute-sanitizer memcheck), the 8B's prefill parity (its layers
# now end with the fused norm), then the 1B's time to first token at 512 and 128 tokens against
# torch.compile (bench.py, three interleaved runs a side, prefill rows only: the decode row and
# three prompt lengths leave torch.compile no time to compile in one call).
X=/tmp/extra2; rm -rf $X; mkdir -p $X
save() { tar -czf $OUT/extra2.tar.gz -C $X .; }
OUT=/tmp/o-chk CHECKS="env prefill prefill-tiles memcheck-prefill prefill-parity-llama.llama_3_8b" GPU_CHECK_BUDGET_S=170 bash scripts/gpu-check.sh > $X/checks.log 2>&1
cp /tmp/o-chk/summary.md $X/checks-summary.md; save
grep -h "^| [pm]" $X/checks-summary.md | cut -c1-420
CHECKS="env benchmark" BENCH_MODELS="llama-3.2-1b" BENCH_PREFILL="512 128" BENCH_SKIP_DECODE=1 GPU_CHECK_BUDGET_S=200 bash scripts/gpu-check.sh > $X/bench.log 2>&1
cp $OUT/summary.md $X/bench-summary.md; cp $OUT/bench.md $OUT/bench.json $X/ 2>/dev/null; save
grep -h "^| bench" $X/bench-summary.md | cut -c1-600; grep -h "llama-3.2-1b | 128 \|llama-3.2-1b | 512 " $X/bench.md
