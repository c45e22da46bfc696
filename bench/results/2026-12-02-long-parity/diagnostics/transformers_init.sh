# The shipped 1B and 1-layer 1B/8B kernels against transformers float32 with transformers' own
# initialisation (std 0.02), full-sequence reference, per-position windows. See diagnostics/README.md.
set -u
export PYTHONUNBUFFERED=1
mkdir -p $OUT/c
python3 build-exp/longpar.py --ptx build-exp/l1b_1.ptx --steps 1024 --init hf --out $OUT/c 2>&1 | grep -v Warn | grep -v "rope_param\|Loading\|Writing"
python3 build-exp/longpar.py --ptx build-exp/l8b_1.ptx --steps 512 --init hf --out $OUT/c 2>&1 | grep -v Warn | grep -v "rope_param\|Loading\|Writing"
python3 build-exp/longpar.py --ptx build-exp/l1b.ptx --steps 1024 --init hf --out $OUT/c 2>&1 | grep -v Warn | grep -v "rope_param\|Loading\|Writing"
python3 build-exp/longpar.py --ptx build-exp/l1b.ptx --steps 1024 --init scaled --out $OUT/c 2>&1 | grep -v Warn | grep -v "rope_param\|Loading\|Writing"
