# Issue 18: row-owned runs (backend/tile/rows.cpp). llama1b: runs that hold a row reduction, their
# private locals in registers; v-off: no runs (the kernel of 2026-12-06-rows' commit); v-prod: also
# runs that start with a product. Then the 1B's prefill parity, and a trace of llama1b (tcand).
#   VARIANTS="tcand:--trace" bash scripts/gpu-prepare.sh
#   MK_ROW_RUNS=off|product mkdsl build examples/llama.mk --config llama_3_2_1b --target sm_90a -o build-gpu/v-off.ptx|v-prod.ptx; gzip
#   (MK_ROW_RUNS: an experiment's switch in rows.cpp, not kept)
G=build-gpu; X=/tmp/extra; rm -rf $X; mkdir -p $X
save() { tar -czf $OUT/extra.tar.gz -C $X .; }
CHECKS="env prefill prefill-ab" PREFILL_AB_ROUNDS=3 GPU_CHECK_BUDGET_S=150 bash scripts/gpu-check.sh > $X/ab.log 2>&1
cp $OUT/summary.md $X/ab-summary.md; save
grep -h "^|" $X/ab-summary.md | cut -c1-400
OUT=/tmp/o-par CHECKS="prefill-parity-llama.llama_3_2_1b" GPU_CHECK_BUDGET_S=100 bash scripts/gpu-check.sh > $X/parity.log 2>&1
cp /tmp/o-par/summary.md $X/parity-summary.md; save
grep -h "^|" $X/parity-summary.md | cut -c1-700
mv $G/aside/* $G/; gunzip -kf $G/v-tcand.ptx.gz
timeout 60 $G/mk-prefill-check --kernel $G/v-tcand.ptx --random-weights 7 --time-tokens 512 --runs 2 --trace /tmp/tr.json > $X/tcand.log 2>&1
python3 bench/results/2026-12-06-attn/tools/op_spans.py /tmp/tr.json > $X/tcand-ops.txt 2>&1; save
head -40 $X/tcand-ops.txt
