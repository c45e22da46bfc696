# Issue 18: wgmma products left in flight over the next K chunk's staging, against d230326's kernel
# (v-old: the 1B built by d230326's mkdsl), with its checks and the 1B's prefill parity, then per-op
# traces and tile variants on it. After:
#   VARIANTS="ffn128:--set prefill_ffn_cols=128;q32:--set prefill_qkv_cols=32;tr:--trace" bash scripts/gpu-prepare.sh
#   (and build-gpu/v-old.ptx.gz, .meta.json: d230326's 1B kernel)
G=build-gpu; X=/tmp/extra; rm -rf $X; mkdir -p $X/traces
save() { tar -czf $OUT/extra.tar.gz -C $X .; }
mkdir -p /tmp/aside && mv $G/v-tr.ptx.gz $G/v-tr.meta.json /tmp/aside/
CHECKS="env mma-wg mma-wg-chains prefill-ab" PREFILL_AB_ROUNDS=3 GPU_CHECK_BUDGET_S=200 bash scripts/gpu-check.sh > $X/ab.log 2>&1
cp $OUT/summary.md $X/ab-summary.md; save
OUT=/tmp/o-par CHECKS="prefill-parity-llama.llama_3_2_1b" GPU_CHECK_BUDGET_S=100 bash scripts/gpu-check.sh > $X/parity.log 2>&1
cp /tmp/o-par/summary.md $X/parity-summary.md; save
mv /tmp/aside/* $G/; gunzip -kf $G/v-tr.ptx.gz $G/v-old.ptx.gz $G/llama1b.ptx.gz
timeout 60 $G/mk-prefill-check --kernel $G/v-tr.ptx --random-weights 7 --time-tokens 512 --runs 2 \
  --trace /tmp/tr.json > $X/traces/tr-512.log 2>&1
python3 scripts/trace_nodes.py /tmp/tr.json --first 40 --last 4 > $X/traces/tr-512-nodes.txt 2>&1; save
timeout 60 $G/mk-prefill-check --kernel $G/llama1b.ptx --random-weights 7 --time-tokens 2048 --runs 2 \
  > $X/traces/new-2048.log 2>&1
timeout 60 $G/mk-prefill-check --kernel $G/v-old.ptx --random-weights 7 --time-tokens 2048 --runs 2 \
  > $X/traces/old-2048.log 2>&1; save
cat $X/ab-summary.md $X/parity-summary.md | grep "^|"; grep -h "median" $X/traces/*.log
