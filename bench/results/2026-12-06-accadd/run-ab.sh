# Issue 18: the attention's acc rescaled inside its row-owned run, then `acc += mma(p, v)` onto it
# (variants/accadd.diff of 2026-12-06-rowruns). llama1b: d757611's kernel; v-accadd: the same with
# the diff applied to a copy of stdlib/. Then the prefill parity of the 1B and the 8B built with it.
#   cp -r stdlib /tmp/sa; (cd /tmp/sa && patch -p2 < bench/results/2026-12-06-rowruns/variants/accadd.diff)
#   VARIANTS="accadd:--stdlib /tmp/sa" bash scripts/gpu-prepare.sh
#   mkdsl build examples/llama.mk --config llama_3_8b --target sm_90a --stdlib /tmp/sa -o build-gpu/aside/accadd8b.ptx; gzip -6
G=build-gpu; X=/tmp/extra; rm -rf $X; mkdir -p $X
save() { tar -czf $OUT/extra.tar.gz -C $X .; }
CHECKS="env prefill prefill-ab" PREFILL_AB_ROUNDS=3 GPU_CHECK_BUDGET_S=150 bash scripts/gpu-check.sh > $X/ab.log 2>&1
cp $OUT/summary.md $X/ab-summary.md; save
grep -h "^|" $X/ab-summary.md | cut -c1-300
# gpu-check.sh unpacks shipped/*.ptx.gz first: replace the packed kernels.
cp $G/v-accadd.ptx.gz $G/shipped/llama.llama_3_2_1b.ptx.gz
cp $G/aside/accadd8b.ptx.gz $G/shipped/llama.llama_3_8b.ptx.gz
for c in llama_3_2_1b llama_3_8b; do
  OUT=/tmp/o-$c CHECKS="prefill-parity-llama.$c" GPU_CHECK_BUDGET_S=170 bash scripts/gpu-check.sh > $X/parity-$c.log 2>&1
  cp /tmp/o-$c/summary.md $X/parity-$c-summary.md; save
  grep -h "^|" $X/parity-$c-summary.md | grep -i parity | cut -c1-500
done
