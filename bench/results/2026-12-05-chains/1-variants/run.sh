# One-off experiment run (issue 18): prefill A/B of variants, parity of v-ovl as the shipped 1B, ncu of the prefill.
G=build-gpu
X=/tmp/extra; rm -rf $X; mkdir -p $X
CHECKS="env prefill-ab" PREFILL_AB_ROUNDS=2 GPU_CHECK_BUDGET_S=200 bash scripts/gpu-check.sh
grep -h "^prefill of" /tmp/mkdsl-gpu-check/logs/prefill-ab-* > $X/ab-lines.txt 2>&1; for f in /tmp/mkdsl-gpu-check/logs/prefill-ab-*; do echo "$f: $(grep '^prefill of' $f)"; done > $X/ab.txt
tar -czf $OUT/extra.tar.gz -C $X .
cp $G/llama1b.ptx $G/llama1b.base.ptx; gzip -c $G/v-ovl.ptx > $G/shipped/llama.llama_3_2_1b.ptx.gz
OUT=$OUT/ovl CHECKS="prefill-parity-llama.llama_3_2_1b" GPU_CHECK_BUDGET_S=100 bash scripts/gpu-check.sh > $X/ovl-parity.log 2>&1
cp $OUT/ovl/summary.md $X/ovl-summary.md; rm -rf $OUT/ovl
tar -czf $OUT/extra.tar.gz -C $X .
prof() { # name, kernel-name, skip, command...
  local n=$1 k=$2 s=$3; shift 3
  timeout 150 ncu --clock-control none --kernel-name $k --launch-skip $s --launch-count 1 --set full --import-source no -o /tmp/$n -f "$@" > $X/ncu-$n.log 2>&1; echo "ncu rc $?" >> $X/ncu-$n.log
  ncu -i /tmp/$n.ncu-rep --page details > $X/$n-details.txt 2>&1
  ncu -i /tmp/$n.ncu-rep --page source --csv --print-source sass 2>&1 | gzip > $X/$n-sass.csv.gz
  ls -la /tmp/$n.ncu-rep >> $X/ncu-$n.log
  tar -czf $OUT/extra.tar.gz -C $X .
}
prof prefill mk_step_prefill 0 $G/mk-prefill-check --kernel $G/llama1b.base.ptx --random-weights 7 --time-tokens 512 --runs 1 --timeout-ms 60000
