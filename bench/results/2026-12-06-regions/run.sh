# Issue 18: the schedule's cache rows relative to pos0 (q/k/v tasks of one head no longer wait for
# each other) and wgmma products left in flight, against d230326's kernel (v-old: the 1B built by
# d230326's mkdsl), with the checks and the 1B's prefill parity, then a per-op trace and tile
# variants. After:
#   VARIANTS="ffn128:--set prefill_ffn_cols=128;q32:--set prefill_qkv_cols=32;r256:--set prefill_rows=256 --set prefill_k_chunk=64;tr:--trace" bash scripts/gpu-prepare.sh
#   (and build-gpu/v-old.ptx.gz, .meta.json: d230326's 1B kernel; tools/sm_timeline.py copied to
#   build-gpu/: a per-SM listing of the trace's first layer)
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
python3 scripts/trace_nodes.py /tmp/tr.json --first 40 --last 4 > $X/traces/tr-512-nodes.txt 2>&1
python3 $G/sm_timeline.py /tmp/tr.json 0 330 > $X/traces/tr-512-timeline.txt 2>&1; save
for k in llama1b v-old; do
  timeout 60 $G/mk-prefill-check --kernel $G/$k.ptx --random-weights 7 --time-tokens 2048 --runs 2 \
    > $X/traces/$k-2048.log 2>&1
done; save
cat $X/ab-summary.md $X/parity-summary.md | grep "^|"; grep -h "median" $X/traces/*.log
