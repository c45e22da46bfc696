# Issue 18, one call: three interleaved rounds of three 512-token prefills of the committed 1B
# kernel (llama1b) against o/down tasks of 128 x 256 in four parts of K (v-d4), 64 x 256
# attention blocks (v-a256) and both (v-d4a256), and up to 8 copy stages a product loop instead
# of 4 (v-st8: mkdsl built with kMaxMmaStages = 8; v-d4st8 with v-d4's tiles); then the time to first token at 128, 512 and
# 2048 tokens and the decode step at context 512, against torch.compile (bench.py, three
# interleaved runs a side).
#   bash scripts/gpu-prepare.sh, then for each variant NAME:OPTIONS of
#   "d4:--set prefill_cols=256 --set prefill_splits=4;a256:--set prefill_keys=256;
#    d4a256:--set prefill_cols=256 --set prefill_splits=4 --set prefill_keys=256":
#   build/tools/mkdsl/mkdsl build examples/llama.mk --config llama_3_2_1b --target sm_90a OPTIONS
#   -o build-gpu/v-NAME.ptx, gzipped; v-st8 and v-d4st8 ("" and the d4 options) from an mkdsl
#   built with backend/tile/tile_gen.h's kMaxMmaStages = 8.
G=build-gpu; X=/tmp/extra; rm -rf $X; mkdir -p $X
save() { tar -czf $OUT/extra.tar.gz -C $X .; }
CHECKS="env prefill-ab" PREFILL_AB_ROUNDS=3 GPU_CHECK_BUDGET_S=190 bash scripts/gpu-check.sh > $X/ab.log 2>&1
cp $OUT/summary.md $X/ab-summary.md; save
grep -h "^|" $X/ab-summary.md | cut -c1-400
CHECKS="env benchmark" BENCH_MODELS="llama-3.2-1b" BENCH_CONTEXTS="512" BENCH_PREFILL="128 512 2048" GPU_CHECK_BUDGET_S=200 bash scripts/gpu-check.sh > $X/bench.log 2>&1
cp $OUT/summary.md $X/bench-summary.md; cp $OUT/bench.md $OUT/bench.json $X/ 2>/dev/null; save
grep -h "^| bench" $X/bench-summary.md | cut -c1-600; grep -h "llama-3.2-1b" $X/bench.md | head -20
