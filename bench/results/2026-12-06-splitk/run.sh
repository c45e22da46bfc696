# Issue 18: o and down in two parts of K (128 x 128 tasks, summed by the norm and a sum op after
# them) against 254d920's kernel (v-base: the 1B built by 254d920's mkdsl), with the checks and
# the 1B's prefill parity, then a per-op trace. After:
#   VARIANTS="s1c64:--set prefill_splits=1 --set prefill_cols=64;ffn128:--set prefill_ffn_cols=128;tr:--trace" bash scripts/gpu-prepare.sh
#   (and build-gpu/v-base.ptx.gz, .meta.json: 254d920's 1B kernel; ../2026-12-06-regions/tools/sm_timeline.py
#   copied to build-gpu/)
G=build-gpu; X=/tmp/extra; rm -rf $X; mkdir -p $X/traces
save() { tar -czf $OUT/extra.tar.gz -C $X .; }
mkdir -p /tmp/aside && mv $G/v-tr.ptx.gz $G/v-tr.meta.json /tmp/aside/
CHECKS="env mma-wg prefill-ab" PREFILL_AB_ROUNDS=3 GPU_CHECK_BUDGET_S=200 bash scripts/gpu-check.sh > $X/ab.log 2>&1
cp $OUT/summary.md $X/ab-summary.md; save
OUT=/tmp/o-par CHECKS="prefill-parity-llama.llama_3_2_1b" GPU_CHECK_BUDGET_S=100 bash scripts/gpu-check.sh > $X/parity.log 2>&1
cp /tmp/o-par/summary.md $X/parity-summary.md; save
mv /tmp/aside/* $G/; gunzip -kf $G/v-tr.ptx.gz
timeout 60 $G/mk-prefill-check --kernel $G/v-tr.ptx --random-weights 7 --time-tokens 512 --runs 2 \
  --trace /tmp/tr.json > $X/traces/tr-512.log 2>&1
python3 scripts/trace_nodes.py /tmp/tr.json --first 40 --last 4 > $X/traces/tr-512-nodes.txt 2>&1
python3 $G/sm_timeline.py /tmp/tr.json 0 330 > $X/traces/tr-512-timeline.txt 2>&1; save
cat $X/ab-summary.md $X/parity-summary.md | grep "^|"; grep -h "median" $X/traces/*.log
