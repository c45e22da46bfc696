# Issue 18, a fourth call: per-op traces of the committed 1B's 512-token `prefill` and 128-token
# `prefill_short` steps (mkdsl build --trace: build-gpu/t/llama1b-trace), then three interleaved
# rounds of three 128-token prefill_short steps of the committed kernel (llama1b) against o and
# down in 8 parts of K (v-s8: --set short_splits=8) and in 2 (v-s2: --set short_splits=2), and of
# three 512-token prefill steps against `m = m_new` moved before the attention's PV statement
# (v-mfirst: --stdlib with that change to std.attention's attention_prefill, one barrier fewer a
# key block).
G=build-gpu; X=/tmp/extra4; rm -rf $X; mkdir -p $X
save() { tar -czf $OUT/extra4.tar.gz -C $X .; }
gunzip -kf $G/llama1b.ptx.gz $G/t/*.ptx.gz
P=$G/mk-prefill-check
timeout 60 $P --kernel $G/t/llama1b-trace.ptx --random-weights 7 --time-tokens 512 --runs 2 --trace $X/trace512.json > $X/trace512.log 2>&1
timeout 60 $P --kernel $G/t/llama1b-trace.ptx --random-weights 7 --time-tokens 128 --runs 2 --step prefill_short --trace $X/trace128.json > $X/trace128.log 2>&1
gzip -f $X/*.json; save
tail -40 $X/trace512.log; tail -40 $X/trace128.log
for r in 1 2 3; do
  for k in $G/llama1b $G/t/v-s8 $G/t/v-s2; do
    echo "short $r $(basename $k): $(timeout 40 $P --kernel $k.ptx --random-weights 7 --time-tokens 128 --runs 3 --step prefill_short 2>&1 | tail -1)"
  done
  for k in $G/llama1b $G/t/v-mfirst; do
    echo "long $r $(basename $k): $(timeout 40 $P --kernel $k.ptx --random-weights 7 --time-tokens 512 --runs 3 2>&1 | tail -1)"
  done
done | tee $X/ab.log; save
