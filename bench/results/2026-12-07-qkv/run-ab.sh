# Issue 18, one call (run as `SKIP_BENCH=1 bash run-ab.sh`): where the time to first token goes
# beyond the step's GPU time (a probe build of mkrt-run, MKRT_WALL=1: the host wall clock at each
# stage of mkrt_step, not committed; and `mkrt-run --warmup 2`), then three interleaved rounds of
# three 512-token prefills: llama1b (the committed kernel), v-q256w (q/k/v tasks of 256 x 64),
# v-k64qd (2026-12-06's best tiles), v-k64qw (256 x 64 q/k/v tasks, a K chunk of 64), v-nfuse (the
# norm after down fused with the next layer's input norm) and v-nfk64qw (both); then v-nfk64qw's
# prefill parity as the shipped 1B kernel.
#   VARIANTS="q256w:--set prefill_qkv_rows=256 --set prefill_qkv_cols=32;k64qd:--set prefill_k_chunk=64 --set prefill_qkv_cols=32 --set prefill_cols=256 --set prefill_splits=4;k64qw:--set prefill_k_chunk=64 --set prefill_qkv_rows=256 --set prefill_qkv_cols=32" bash scripts/gpu-prepare.sh
#   and, with the fused norm's stdlib (now committed) from a copy: mkdsl build LLAMA.mk --stdlib DIR
#   --config llama_3_2_1b --target sm_90a [the k64qw options] -o build-gpu/v-nf[k64qw].ptx, gzipped.
G=build-gpu; X=/tmp/extra; rm -rf $X; mkdir -p $X
save() { tar -czf $OUT/extra.tar.gz -C $X .; }
gunzip -kf $G/llama1b.ptx.gz
T512=$(python3 -c "import random; r=random.Random(5); print(','.join(str(r.randrange(128256)) for _ in range(512)))")
for r in 1 2 3; do
  MKRT_WALL=1 timeout 60 $G/mkrt-run-probe --ptx $G/llama1b.ptx --random-weights 7 --tokens $T512 --max-new 2 > $X/probe-$r.log 2>&1
  echo "cold $r: $(grep -E '^wall|first token' $X/probe-$r.log | head -8 | tr '\n' ' ')"
  timeout 60 $G/mkrt-run --ptx $G/llama1b.ptx --random-weights 7 --tokens $T512 --max-new 1 --warmup 2 > $X/warm-$r.log 2>&1
  echo "warm $r: $(grep -E 'first token|warm-up' $X/warm-$r.log | tr '\n' ' ')"
done
MKRT_WALL=1 timeout 60 $G/mkrt-run-probe --ptx $G/llama1b.ptx --random-weights 7 --tokens $T512 --max-new 1 --warmup 1 > $X/probe-warm.log 2>&1
echo "probe warm: $(grep -E '^wall|first token' $X/probe-warm.log | tail -8 | tr '\n' ' ')"
save
CHECKS="env prefill-ab" PREFILL_AB_ROUNDS=3 GPU_CHECK_BUDGET_S=200 bash scripts/gpu-check.sh > $X/ab.log 2>&1
cp $OUT/summary.md $X/ab-summary.md; save
grep -h "^|" $X/ab-summary.md | cut -c1-220
# Then v-nfk64qw as the shipped 1B kernel (as 2026-12-06-short/run-k64qd.sh): its prefill parity
# against transformers f32 and the time to first token at 128 and 512 tokens against torch.compile.
gunzip -kf $G/v-nfk64qw.ptx.gz
rm -f $G/shipped/llama.llama_3_2_1b.ptx.gz $G/llama1b.ptx.gz
cp $G/v-nfk64qw.ptx $G/shipped/llama.llama_3_2_1b.ptx; cp $G/v-nfk64qw.meta.json $G/shipped/llama.llama_3_2_1b.meta.json
cp $G/v-nfk64qw.ptx $G/llama1b.ptx; cp $G/v-nfk64qw.meta.json $G/llama1b.meta.json
OUT=/tmp/o-par CHECKS="prefill-parity-llama.llama_3_2_1b" GPU_CHECK_BUDGET_S=100 bash scripts/gpu-check.sh > $X/parity.log 2>&1
cp /tmp/o-par/summary.md $X/parity-summary.md; save
grep -h "^|" $X/parity-summary.md | grep -i parity | cut -c1-500
[ -n "${SKIP_BENCH:-}" ] && exit 0  # a short call: parity only
CHECKS="env benchmark" BENCH_MODELS="llama-3.2-1b" BENCH_PREFILL="128 512" BENCH_SKIP_DECODE=1 GPU_CHECK_BUDGET_S=190 bash scripts/gpu-check.sh > $X/bench.log 2>&1
cp $OUT/summary.md $X/bench-summary.md; cp $OUT/bench.md $X/ 2>/dev/null; save
grep -h "^| bench" $X/bench-summary.md | cut -c1-400; grep -h "llama-3.2-1b | 128 \|llama-3.2-1b | 512 " $X/bench.md
