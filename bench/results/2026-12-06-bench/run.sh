# Issue 18, on this change's 1B kernel (scripts/gpu-prepare.sh) and, in build-gpu/pre18/, ffcdd5f's
# (the last kernel before issue 18's work: its mkdsl built it, its mkrt-run runs it):
# 1. the decode step at context 512 (a 512-token prompt, then 256 timed steps, random weights),
#    three interleaved rounds of each kernel; 2. time to first token of a 512-token prompt against
#    torch.compile and eager (bench.py's prefill rows).
G=build-gpu; X=/tmp/decode; rm -rf $X; mkdir -p $X
gunzip -kf $G/llama1b.ptx.gz $G/pre18/llama1b.ptx.gz
TOK=$(seq -s, 1 512)
for r in 1 2 3; do
  timeout 100 $G/mkrt-run --ptx $G/llama1b.ptx --random-weights 7 --tokens $TOK --max-new 256 > $X/decode-new-$r.log 2>&1
  timeout 100 $G/pre18/mkrt-run --ptx $G/pre18/llama1b.ptx --random-weights 7 --tokens $TOK --max-new 256 > $X/decode-pre18-$r.log 2>&1
done
grep -H "per-token latency" $X/decode-*.log; tar -czf $OUT/decode.tar.gz -C $X .
CHECKS="env benchmark" BENCH_MODELS="llama-3.2-1b" BENCH_PREFILL="512" BENCH_SKIP_DECODE=1 \
  GPU_CHECK_BUDGET_S=330 bash scripts/gpu-check.sh
