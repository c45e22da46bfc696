# Issue 18: the attention's queries read inside its product and the norms over whole rows
# (llama1b: with gate/up tasks of 128 x 256; v-s1f64: with 128 x 128), against v-base (the 1B built
# by a53f3e7) and v-base128 (a53f3e7 with --set prefill_ffn_cols=128); then the 1B's and the 8B's
# prefill parity, and a trace of llama1b's prefill (tcand, aside so prefill-ab does not time it).
#   VARIANTS="s1f64:--set prefill_ffn_cols=64;tcand:--trace" bash scripts/gpu-prepare.sh
#   (v-base, v-base128: mkdsl build of a53f3e7's examples/llama.mk with its stdlib, gzipped into build-gpu/)
G=build-gpu; X=/tmp/extra; rm -rf $X; mkdir -p $X
save() { tar -czf $OUT/extra.tar.gz -C $X .; }
CHECKS="env prefill prefill-ab" PREFILL_AB_ROUNDS=3 GPU_CHECK_BUDGET_S=200 bash scripts/gpu-check.sh > $X/ab.log 2>&1
cp $OUT/summary.md $X/ab-summary.md; save
grep -h "^|" $X/ab-summary.md
OUT=/tmp/o-par CHECKS="prefill-parity-llama.llama_3_2_1b prefill-parity-llama.llama_3_8b" GPU_CHECK_BUDGET_S=260 bash scripts/gpu-check.sh > $X/parity.log 2>&1
cp /tmp/o-par/summary.md $X/parity-summary.md; save
grep -h "^|" $X/parity-summary.md
mv $G/aside/* $G/; gunzip -kf $G/v-tcand.ptx.gz
timeout 60 $G/mk-prefill-check --kernel $G/v-tcand.ptx --random-weights 7 --time-tokens 512 --runs 2 --trace /tmp/tr.json > $X/tcand.log 2>&1
python3 bench/results/2026-12-06-attn/tools/op_spans.py /tmp/tr.json > $X/tcand-ops.txt 2>&1; save
head -40 $X/tcand-ops.txt
