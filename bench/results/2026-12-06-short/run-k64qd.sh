# Issue 18, a third call (bench-k64qd/): v-k64qd (gpu-prepare.sh's VARIANTS, as run-ab.sh) as the
# 1B kernel, its prefill parity and time to first token at 128 and 512 tokens against
# torch.compile, in the session's warm machine.
G=build-gpu; X=/tmp/extra3; mkdir -p $X; gunzip -kf $G/v-k64qd.ptx.gz
rm -f $G/shipped/llama.llama_3_2_1b.ptx.gz $G/llama1b.ptx.gz
cp $G/v-k64qd.ptx $G/shipped/llama.llama_3_2_1b.ptx; cp $G/v-k64qd.meta.json $G/shipped/llama.llama_3_2_1b.meta.json
cp $G/v-k64qd.ptx $G/llama1b.ptx; cp $G/v-k64qd.meta.json $G/llama1b.meta.json
OUT=/tmp/o-par CHECKS="prefill-parity-llama.llama_3_2_1b" GPU_CHECK_BUDGET_S=100 bash scripts/gpu-check.sh > $X/parity.log 2>&1
cp /tmp/o-par/summary.md $X/parity-summary.md; tar czf $OUT/extra3.tar.gz -C $X .
grep -h "^|" $X/parity-summary.md | grep -i parity | cut -c1-500
CHECKS="env benchmark" BENCH_MODELS="llama-3.2-1b" BENCH_PREFILL="128 512" BENCH_SKIP_DECODE=1 GPU_CHECK_BUDGET_S=200 bash scripts/gpu-check.sh > $X/bench.log 2>&1
cp $OUT/summary.md $X/bench-summary.md; tar czf $OUT/extra3.tar.gz -C $X .
grep -h "^| bench" $X/bench-summary.md | cut -c1-400
