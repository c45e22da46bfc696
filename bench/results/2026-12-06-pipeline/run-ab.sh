# Issue 18: causal attention tasks placed longest first (lowering/schedule.cpp), and a loop's
# product operands copied an iteration ahead (backend/tile/pipeline.cpp). llama1b: both; v-lpt:
# the placement alone; v-base: d757611's kernel. Each kernel with its own meta (counters, smem).
# Then the tiny prefill check, the 1B's prefill parity and a trace of llama1b (tpipe).
#   VARIANTS="tpipe:--trace" bash scripts/gpu-prepare.sh; mv build-gpu/v-tpipe.* build-gpu/aside/
#   v-base, v-lpt: `mkdsl build examples/llama.mk --config llama_3_2_1b --target sm_90a` of those trees
G=build-gpu; X=/tmp/extra; rm -rf $X; mkdir -p $X
save() { tar -czf $OUT/extra.tar.gz -C $X .; }
CHECKS="env prefill prefill-ab" PREFILL_AB_ROUNDS=3 GPU_CHECK_BUDGET_S=210 bash scripts/gpu-check.sh > $X/ab.log 2>&1
cp $OUT/summary.md $X/ab-summary.md; save
grep -h "^|" $X/ab-summary.md | cut -c1-300
OUT=/tmp/o-par CHECKS="prefill-parity-llama.llama_3_2_1b" GPU_CHECK_BUDGET_S=100 bash scripts/gpu-check.sh > $X/parity.log 2>&1
cp /tmp/o-par/summary.md $X/parity-summary.md; save
grep -h "^|" $X/parity-summary.md | grep -i parity | cut -c1-600
mv $G/aside/* $G/; gunzip -kf $G/v-tpipe.ptx.gz
timeout 60 $G/mk-prefill-check --kernel $G/v-tpipe.ptx --random-weights 7 --time-tokens 512 --runs 2 --trace /tmp/tr.json > $X/tpipe.log 2>&1
python3 bench/results/2026-12-06-attn/tools/op_spans.py /tmp/tr.json > $X/tpipe-ops.txt 2>&1; save
head -20 $X/tpipe-ops.txt
