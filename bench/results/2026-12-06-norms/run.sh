# Issue 18: the prefill norms' tiles (the norm after o now sums three f32 rows twice: 11.7 us a
# task against 5.2, bench/results/2026-12-06-splitk) on c0fe68c's 1B kernel: columns at a time
# (prefill_norm_chunk 512 -> 1024, 2048) and rows per task (4 -> 2), three interleaved rounds;
# then the 1B's prefill parity of the fastest variant when it is 1% faster than llama1b.ptx. After:
#   VARIANTS="nc2048:--set prefill_norm_chunk=2048;nc1024:--set prefill_norm_chunk=1024;nr2:--set prefill_norm_rows=2" bash scripts/gpu-prepare.sh
G=build-gpu; X=/tmp/extra; rm -rf $X; mkdir -p $X
CHECKS="env prefill-ab" PREFILL_AB_ROUNDS=3 GPU_CHECK_BUDGET_S=150 bash scripts/gpu-check.sh > $X/ab.log 2>&1
cp $OUT/summary.md $X/ab-summary.md; tar -czf $OUT/extra.tar.gz -C $X .
# The median of each kernel's round medians.
best=$(python3 - $X/ab-summary.md <<'PY'
import re, statistics, sys, collections
m = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = re.match(r"\| prefill-ab-(\S+)-\d+ \|.*median ([0-9.]+) ms", line)
    if r: m[r.group(1)].append(float(r.group(2)))
med = {k: statistics.median(v) for k, v in m.items()}
print(med, file=sys.stderr)
k = min(med, key=med.get)
print(k if k != "llama1b" and med[k] < 0.99 * med["llama1b"] else "")
PY
)
echo "best variant: ${best:-none}" | tee $X/best.txt
if [ -n "$best" ]; then
  gzip -c $G/$best.ptx > $G/shipped/llama.llama_3_2_1b.ptx.gz && cp $G/$best.meta.json $G/shipped/llama.llama_3_2_1b.meta.json
  OUT=/tmp/o-par CHECKS="prefill-parity-llama.llama_3_2_1b" GPU_CHECK_BUDGET_S=100 bash scripts/gpu-check.sh > $X/parity.log 2>&1
  cp /tmp/o-par/summary.md $X/parity-summary.md
fi
tar -czf $OUT/extra.tar.gz -C $X .
cat $X/ab-summary.md $X/parity-summary.md 2>/dev/null | grep "^|"; cat $X/best.txt
