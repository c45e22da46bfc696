#!/usr/bin/env bash
# GPU kernels of diagnostics/variants.txt against the CPU interpreter (same --random-weights 1, same
# 512 tokens), and gpu_parity.py over 512 positions for two of them. See diagnostics/README.md.
set -u
cd "$(dirname "$0")/.."
E=build-exp; W=/tmp/exp; mkdir -p $W
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv
T=$(cat $E/tokens.txt)
for v in a1b b1b_c16 c8b dmha; do
  $E/mkrt-run --ptx $E/$v.ptx --random-weights 1 --tokens "$T" --max-new 0 --dump-logits $W/$v.gpu.npy 2>&1 | tail -2
done
timeout 300 python3 scripts/gpu_parity.py --meta $E/a1b.meta.json --ptx $E/a1b.ptx --mkrt $E/mkrt-run --out $W/parity-a1b --steps 512 --prompt 16 --seed 1 --no-greedy --name a1b 2>&1 | tail -30
timeout 200 python3 scripts/gpu_parity.py --meta $E/dmha.meta.json --ptx $E/dmha.ptx --mkrt $E/mkrt-run --out $W/parity-dmha --steps 512 --prompt 16 --seed 1 --no-greedy --name dmha 2>&1 | tail -8
tar czf $OUT/exp.tar.gz -C $W .
