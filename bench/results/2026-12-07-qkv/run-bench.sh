# Issue 18, a second call: v-nfk64qw (the committed 1B kernel: the fused norm, a K chunk of 64,
# q/k/v tasks of 256 x 64) as the shipped 1B, time to first token at 512 and 128 tokens against
# torch.compile (bench.py: three interleaved runs a side, each after --prefill-warmup untimed ones).
G=build-gpu; X=/tmp/extra2; rm -rf $X; mkdir -p $X
gunzip -kf $G/v-nfk64qw.ptx.gz
rm -f $G/shipped/llama.llama_3_2_1b.ptx.gz $G/llama1b.ptx.gz
cp $G/v-nfk64qw.ptx $G/shipped/llama.llama_3_2_1b.ptx; cp $G/v-nfk64qw.meta.json $G/shipped/llama.llama_3_2_1b.meta.json
# bench.py times build-gpu/llama1b.ptx: the call ran without this line, so its mkdsl side found no kernel.
cp $G/v-nfk64qw.ptx $G/llama1b.ptx; cp $G/v-nfk64qw.meta.json $G/llama1b.meta.json
CHECKS="env benchmark" BENCH_MODELS="llama-3.2-1b" BENCH_PREFILL="512 128" BENCH_SKIP_DECODE=1 GPU_CHECK_BUDGET_S=200 bash scripts/gpu-check.sh > $X/bench.log 2>&1
cp $OUT/summary.md $X/bench-summary.md; cp $OUT/bench.md $OUT/bench.json $X/ 2>/dev/null; tar -czf $OUT/extra2.tar.gz -C $X .
grep -h "^| bench" $X/bench-summary.md | cut -c1-400; grep -h "llama-3.2-1b | 128 \|llama-3.2-1b | 512 " $X/bench.md
