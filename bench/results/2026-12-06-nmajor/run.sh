# Issue 18: mma's b read N-major (attention's v and its k copied 16 bytes at a time) against the
# previous kernel (v-old: d400223's llama1b.ptx), its checks and parity, then per-op traces of tile
# choices on it. After:
#   VARIANTS="t0:--trace;t1:--trace --set prefill_rows=256 --set prefill_k_chunk=64;t2:--trace --set prefill_ffn_cols=128;t3:--trace --set prefill_rows=64;t4:--trace --set prefill_k_chunk=64" bash scripts/gpu-prepare.sh
#   (and v-old.ptx.gz/.meta.json: d400223's 1B kernel, built there)
G=build-gpu; X=/tmp/extra; rm -rf $X; mkdir -p $X/traces
save() { tar -czf $OUT/extra.tar.gz -C $X .; }
mkdir -p /tmp/aside && mv $G/v-t*.ptx.gz $G/v-t*.meta.json /tmp/aside/
CHECKS="env mma-wg mma-wg-chains prefill-ab" PREFILL_AB_ROUNDS=3 GPU_CHECK_BUDGET_S=200 bash scripts/gpu-check.sh > $X/ab.log 2>&1
cp $OUT/summary.md $X/ab-summary.md; save
OUT=/tmp/o-par CHECKS="prefill-parity-llama.llama_3_2_1b" GPU_CHECK_BUDGET_S=90 bash scripts/gpu-check.sh > $X/parity.log 2>&1
cp /tmp/o-par/summary.md $X/parity-summary.md; save
mv /tmp/aside/* $G/; for z in $G/v-t*.ptx.gz; do gunzip -kf $z; done
for v in t0 t1 t2 t3 t4; do
  timeout 60 $G/mk-prefill-check --kernel $G/v-$v.ptx --random-weights 7 --time-tokens 512 --runs 2 \
    --trace /tmp/$v.json > $X/traces/$v-512.log 2>&1; save
done
timeout 60 $G/mk-prefill-check --kernel $G/v-t0.ptx --random-weights 7 --time-tokens 2048 --runs 1 \
  --trace /tmp/t0-2048.json > $X/traces/t0-2048.log 2>&1; save
cat $X/ab-summary.md $X/parity-summary.md | grep "^|"; grep -h "median" $X/traces/*.log
