# Issue 18: time --mma-chains 2/4 (and 4 with 32-pair q/k/v tasks) against the committed 1B prefill,
# the chain kernels' wgmma checks, each variant as the shipped 1B through prefill parity, and the
# 8B's prefill parity on its new tiles. After:
#   VARIANTS="c2:--mma-chains 2;c4:--mma-chains 4;c4q32:--mma-chains 4 --set prefill_qkv_cols=32" bash scripts/gpu-prepare.sh
G=build-gpu; X=/tmp/extra; rm -rf $X; mkdir -p $X
save() { tar -czf $OUT/extra.tar.gz -C $X .; }
CHECKS="env mma-wg mma-wg-chains prefill-ab" PREFILL_AB_ROUNDS=2 GPU_CHECK_BUDGET_S=200 bash scripts/gpu-check.sh
for f in /tmp/mkdsl-gpu-check/logs/prefill-ab-*; do echo "$f: $(grep '^prefill of' $f)"; done > $X/ab.txt; save
cp $G/shipped/llama.llama_3_2_1b.ptx.gz /tmp/base1b.ptx.gz
for v in c4 c2 c4q32; do
  gzip -c $G/v-$v.ptx > $G/shipped/llama.llama_3_2_1b.ptx.gz
  OUT=/tmp/o-$v CHECKS="prefill-parity-llama.llama_3_2_1b" GPU_CHECK_BUDGET_S=90 bash scripts/gpu-check.sh > $X/$v-parity.log 2>&1
  cp /tmp/o-$v/summary.md $X/$v-parity-summary.md; save
done
cp /tmp/base1b.ptx.gz $G/shipped/llama.llama_3_2_1b.ptx.gz
OUT=/tmp/o-8b CHECKS="prefill-parity-llama.llama_3_8b" GPU_CHECK_BUDGET_S=200 bash scripts/gpu-check.sh > $X/8b-parity.log 2>&1
cp /tmp/o-8b/summary.md $X/8b-parity-summary.md; save
