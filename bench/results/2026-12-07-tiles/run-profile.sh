# Issue 18: an Nsight Compute profile (full set, per-instruction stall samples) of one launch of the
# 1B's prefill step (512 tokens, random weights) at ff74cac: where a layer's loops spend their samples now.
G=build-gpu; X=/tmp/extra; rm -rf $X; mkdir -p $X
save() { tar -czf $OUT/extra.tar.gz -C $X .; }
gunzip -kf $G/llama1b.ptx.gz
timeout 300 ncu --clock-control none --kernel-name mk_step_prefill --launch-count 1 --set full \
  --import-source no -o /tmp/prefill -f $G/mk-prefill-check --kernel $G/llama1b.ptx --random-weights 7 \
  --time-tokens 512 --runs 1 --timeout-ms 60000 > $X/ncu.log 2>&1; echo "ncu rc $?" >> $X/ncu.log
ncu -i /tmp/prefill.ncu-rep --page details > $X/details.txt 2>&1; save
ncu -i /tmp/prefill.ncu-rep --page source --csv --print-source sass 2>&1 | gzip > $X/sass.csv.gz; save
ncu -i /tmp/prefill.ncu-rep --page raw --csv 2>&1 | gzip > $X/raw.csv.gz; save
