# Issue 18: the product's epilogue written from the accumulators (a let or `=` of f(mma(..))), and
# attention_prefill without its materialized tiles (stdlib variant C: the scale folded into exp, the
# mask and P evaluated where used; D: C with `acc = acc * alpha; acc += mma(..)`), at 64 and 128
# queries a block; against v-old (the 1B built by 93dd7f4). Then a trace of C128.
#   VARIANTS="C64:--stdlib /tmp/slC;C128:--stdlib /tmp/slC --set prefill_queries=128;D128:--stdlib /tmp/slD --set prefill_queries=128;C128f:... --set prefill_ffn_cols=128;tC128:--trace ..." bash scripts/gpu-prepare.sh
G=build-gpu; X=/tmp/extra; rm -rf $X; mkdir -p $X
save() { tar -czf $OUT/extra.tar.gz -C $X .; }
CHECKS="env mma-wg prefill prefill-ab" PREFILL_AB_ROUNDS=3 GPU_CHECK_BUDGET_S=240 bash scripts/gpu-check.sh > $X/ab.log 2>&1
cp $OUT/summary.md $X/ab-summary.md; save
mv $G/aside/* $G/; gunzip -kf $G/v-tC128.ptx.gz
timeout 60 $G/mk-prefill-check --kernel $G/v-tC128.ptx --random-weights 7 --time-tokens 512 --runs 2 --trace /tmp/tr.json > $X/tC128.log 2>&1
python3 bench/results/2026-12-06-attn/tools/op_spans.py /tmp/tr.json > $X/tC128-ops.txt 2>&1; save
grep "^|" $X/ab-summary.md; cat $X/tC128-ops.txt
