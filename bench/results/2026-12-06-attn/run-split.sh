# Issue 18: where an attention iteration's time goes, and what q/k/v and gate/up tiles give, from traces.
# Each variant is the 1B built with --trace and: tbase (nothing else), tk64 (--set prefill_keys=64),
# tA1/tA2/tA3 (a copy of stdlib whose attention_prefill drops the P V product / the online softmax /
# both: wrong numbers, timing only), tffn (--set prefill_ffn_cols=128), tqkv32 (--set prefill_qkv_cols=32).
#   VARIANTS="tbase:--trace;tk64:--trace --set prefill_keys=64;tA1:--trace --stdlib /tmp/slA1;..." bash scripts/gpu-prepare.sh
G=build-gpu; X=/tmp/extra; rm -rf $X; mkdir -p $X
for v in tbase tk64 tA1 tA2 tA3 tffn tqkv32; do
  gunzip -kf $G/v-$v.ptx.gz
  timeout 60 $G/mk-prefill-check --kernel $G/v-$v.ptx --random-weights 7 --time-tokens 512 --runs 2 \
    --trace /tmp/tr-$v.json > $X/$v.log 2>&1
  python3 bench/results/2026-12-06-attn/tools/op_spans.py /tmp/tr-$v.json > $X/$v-ops.txt 2>&1
  python3 scripts/trace_nodes.py /tmp/tr-$v.json --first 12 --last 2 > $X/$v-nodes.txt 2>&1
  tar -czf $OUT/extra.tar.gz -C $X .
done
for v in tbase tk64 tA1 tA2 tA3 tffn tqkv32; do echo "== $v"; grep -h median $X/$v.log; cat $X/$v-ops.txt; done
