# Issue 18: a step with matrix-instruction products built without the weight ring (128 registers
# a thread instead of 96), with the product's epilogue written from the accumulators; against
# v-old (the 1B built by 93dd7f4). Variants: ffn128 (--set prefill_ffn_cols=128), C128 and C128f
# (stdlib variant C of attention_prefill at 128 queries a block; f: and gate/up 128 x 256).
#   VARIANTS="ffn128:--set prefill_ffn_cols=128;C128:--stdlib /tmp/slC --set prefill_queries=128;C128f:..." bash scripts/gpu-prepare.sh
G=build-gpu; X=/tmp/extra; rm -rf $X; mkdir -p $X
save() { tar -czf $OUT/extra.tar.gz -C $X .; }
CHECKS="env mma-wg prefill prefill-ab" PREFILL_AB_ROUNDS=3 GPU_CHECK_BUDGET_S=200 bash scripts/gpu-check.sh > $X/ab.log 2>&1
cp $OUT/summary.md $X/ab-summary.md; save
OUT=/tmp/o-par CHECKS="prefill-parity-llama.llama_3_2_1b" GPU_CHECK_BUDGET_S=120 bash scripts/gpu-check.sh > $X/parity.log 2>&1
cp /tmp/o-par/summary.md $X/parity-summary.md; save
grep -h "^|" $X/ab-summary.md $X/parity-summary.md
