#!/usr/bin/env bash
# Prepare build-gpu/ for the GPU checks (scripts/gpu-check.sh), on the build machine.
#
# The GPU machine has nvcc, ptxas, python3 with torch/transformers, compute-sanitizer, but no LLVM,
# ANTLR or fmt, so mkdsl cannot be built there: everything it needs from mkdsl is made here and
# carried in build-gpu/ (ignored by git; the device tool's `carry`, at most 64 MiB):
#   mkrt-run                       the host runtime's CLI, stripped (needs only libc and libcuda)
#   tiny.ptx, tiny.meta.json       examples/llama_tiny.mk, sm_90a
#   llama1b.ptx, llama1b.meta.json examples/llama.mk --config llama_3_2_1b, sm_90a
#   llama8b.ptx, llama8b.meta.json examples/llama.mk --config llama_3_8b (the benchmark's second model)
#   tiny_drop.ptx, .meta.json      the tiny kernel built with --test-drop-signal 5 (the fault test)
#   llama1b_l{2,4,8}.ptx, .meta.json  the 1B shapes with 2, 4, 8 layers (diagnostic depth sweep)
#   shipped/STEM.CONFIG.ptx, .meta.json  every config of every examples/*.mk (gpu-check.sh's
#                                  long-position parity runs each), listed in shipped.txt as
#                                  "STEM.CONFIG FILE CONFIG" lines
#   v-NAME.ptx, .meta.json         speed experiments: the 1B config built with extra options, from
#                                  VARIANTS="NAME:OPTIONS;NAME:OPTIONS" (gpu-check.sh's `variants`;
#                                  a `--config` among the options replaces the 1B's)
#   tiny_cpu.npy                   the CPU interpreter's logits for tests/data's weights and tokens
#   mma.ptx, mma.meta.json, mma_cpu.npy  tests/gpu/mma_decode.mk (mma and mma_nt in a decode-shaped
#                                  step) and the interpreter's logits for it (random weights 7)
#   mma_tc.ptx, mma_tc.meta.json, mma_tc_cpu.npy  the same for tests/gpu/mma_tensor_decode.mk (on
#                                  the matrix instruction)
#   mma_wg.ptx, mma_wg.meta.json, mma_wg_cpu.npy  the same for tests/gpu/mma_group_decode.mk (on
#                                  sm_90a's warpgroup instruction)
#   mma_wg_chains.ptx, .meta.json, mma_wg_chains_cpu.npy  the same with --mma-chains 4 (the
#                                  interpreter's logits are mma_wg's: it has no accumulator chains)
#   rows.ptx, rows.meta.json, rows_cpu.npy  the same for tests/gpu/chunk_attention_decode.mk (row_sum,
#                                  row_max, row_min, repeat_rows, repeat_cols in a chunk-shaped attention)
#   mk-prefill-check               the prefill steps of tiny.ptx against tests/data's goldens and its
#                                  decode step, and the 1B's timing (tests/gpu/prefill_check.cpp,
#                                  stripped like mkrt-run)
#   mma_proj_CONFIG_TILE.ptx, .meta.json  bench/mma/proj.mk per config and tile (scripts/bench_mma.py)
#   PREPARED.txt                   git revision, tool versions, sha256 of every file
# Every .ptx travels gzipped (X.ptx.gz: a kernel with prefill entries is tens of MB of text);
# gpu-check.sh unpacks them first.
#
#   bash scripts/gpu-prepare.sh            # then: device run `bash scripts/gpu-check.sh`, carry build-gpu
#
# Environment: BUILD (default build), OUT_DIR (default build-gpu), DROP_TASK (default 5), MMA_TILES,
# MKDSL_BUILD_OPTIONS (added to every kernel's build).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
G=${OUT_DIR:-build-gpu}
DROP_TASK=${DROP_TASK:-5}
MKDSL=$BUILD/tools/mkdsl/mkdsl
MKRT=$BUILD/tools/mkrt/mkrt-run
LIMIT_MIB=60   # the carry limit is 64 MiB for everything that travels

step() { printf '\n== %s\n' "$*"; }

step "build ($BUILD)"
if [ ! -f "$BUILD/build.ninja" ]; then
  echo "no $BUILD/build.ninja: configure first (bash scripts/run.sh does)" >&2
  exit 1
fi
ninja -C "$BUILD" mkdsl mkrt-run mk-prefill-check 2>/dev/null || ninja -C "$BUILD"

step "fill $G/"
rm -rf "$G"
mkdir -p "$G"
cp "$MKRT" "$G/mkrt-run"
cp "$BUILD/tests/mk-prefill-check" "$G/mk-prefill-check"
for tool in mkrt-run mk-prefill-check; do
  strip "$G/$tool"
  echo "$tool needs:"; ldd "$G/$tool" | sed 's/^/  /'
  if ldd "$G/$tool" | grep -v -E 'linux-vdso|libc\.so|libm\.so|ld-linux' | grep -q .; then
    echo "$tool links more than libc/libm; it may not run on the GPU machine" >&2
    exit 1
  fi
done

# MKDSL_BUILD_OPTIONS: options for every kernel (e.g. `--mma=warp`, to run every check on mma.sync).
read -ra BUILD_OPTIONS <<< "${MKDSL_BUILD_OPTIONS:-}"
build() {  # NAME FILE [mkdsl build options...]
  local name=$1 file=$2; shift 2
  echo "$MKDSL build $file -o $G/$name.ptx --target sm_90a ${BUILD_OPTIONS[*]} $*"
  "$MKDSL" build "$file" -o "$G/$name.ptx" --target sm_90a "${BUILD_OPTIONS[@]}" "$@"
}
build tiny examples/llama_tiny.mk
build llama1b examples/llama.mk --config llama_3_2_1b
build llama8b examples/llama.mk --config llama_3_8b
build tiny_drop examples/llama_tiny.mk --test-drop-signal "$DROP_TASK"
# Diagnostic only (gpu-check.sh's depth sweep, not gated): the Llama-3.2-1B shapes with fewer layers,
# to see how the distance to float32 grows with depth, for mkdsl and for transformers' bf16 alike.
for L in 2 4 8; do
  build "llama1b_l$L" examples/llama.mk --config llama_3_2_1b --set layers=$L
done

# Every configuration that examples/ ships, for the long-position parity (gpu-check.sh's
# parity-STEM.CONFIG checks). A config is a `config NAME` line (the formatter's canonical form).
mkdir -p "$G/shipped"
: > "$G/shipped.txt"
for f in examples/*.mk; do
  stem=$(basename "$f" .mk)
  for c in $(sed -nE 's/^config ([A-Za-z_][A-Za-z0-9_]*).*/\1/p' "$f"); do
    build "shipped/$stem.$c" "$f" --config "$c"
    echo "$stem.$c $f $c" >> "$G/shipped.txt"
  done
done
[ -s "$G/shipped.txt" ] || { echo "no config found in examples/*.mk" >&2; exit 1; }
echo "shipped configs:"; sed 's/^/  /' "$G/shipped.txt"

# Speed experiments (gpu-check.sh's `variants`, INFO only): e.g.
#   VARIANTS="r16:--set qkv_rows=16 --set qkv_chunk=1024;traced:--trace" bash scripts/gpu-prepare.sh
IFS=';' read -ra VARIANT_LIST <<< "${VARIANTS:-}"
for v in "${VARIANT_LIST[@]}"; do
  [ -n "$v" ] || continue
  # shellcheck disable=SC2086  # the options are words
  build "v-${v%%:*}" examples/llama.mk --config llama_3_2_1b ${v#*:}
done

TOKENS=$(tr -d ' \n' < tests/data/tiny_llama_tokens.txt)
echo "$MKDSL run examples/llama_tiny.mk --device cpu --weights tests/data/tiny_llama.safetensors --tokens $TOKENS --max-new 0 --dump-logits $G/tiny_cpu.npy"
"$MKDSL" run examples/llama_tiny.mk --device cpu --weights tests/data/tiny_llama.safetensors \
  --tokens "$TOKENS" --max-new 0 --dump-logits "$G/tiny_cpu.npy"

build mma tests/gpu/mma_decode.mk
MMA_TOKENS=3,17,5,39,0,22,8,11,30,1,2,9
echo "$MKDSL run tests/gpu/mma_decode.mk --device cpu --random-weights 7 --tokens $MMA_TOKENS --max-new 0 --dump-logits $G/mma_cpu.npy"
"$MKDSL" run tests/gpu/mma_decode.mk --device cpu --random-weights 7 --tokens "$MMA_TOKENS" --max-new 0 \
  --dump-logits "$G/mma_cpu.npy"
echo "$MMA_TOKENS" > "$G/mma_tokens.txt"
build mma_tc tests/gpu/mma_tensor_decode.mk
# scripts/bench_mma.py's kernels (gpu-check.sh's bench-mma): each config of bench/mma/proj.mk at
# each output tile of MMA_TILES (ROWSxCOLS, default "64x64 128x64 64x128 128x128").
for c in $(sed -nE 's/^config ([A-Za-z_][A-Za-z0-9_]*).*/\1/p' bench/mma/proj.mk); do
  for tile in ${MMA_TILES:-64x64 128x64 64x128 128x128}; do
    build "mma_proj_${c}_$tile" bench/mma/proj.mk --config "$c" --set "rows=${tile%x*}" --set "cols=${tile#*x}"
  done
done
echo "$MKDSL run tests/gpu/mma_tensor_decode.mk --device cpu --random-weights 7 --tokens $MMA_TOKENS --max-new 0 --dump-logits $G/mma_tc_cpu.npy"
"$MKDSL" run tests/gpu/mma_tensor_decode.mk --device cpu --random-weights 7 --tokens "$MMA_TOKENS" --max-new 0 \
  --dump-logits "$G/mma_tc_cpu.npy"
build mma_wg tests/gpu/mma_group_decode.mk --mma=warpgroup
echo "$MKDSL run tests/gpu/mma_group_decode.mk --device cpu --random-weights 7 --tokens $MMA_TOKENS --max-new 0 --dump-logits $G/mma_wg_cpu.npy"
"$MKDSL" run tests/gpu/mma_group_decode.mk --device cpu --random-weights 7 --tokens "$MMA_TOKENS" --max-new 0 \
  --dump-logits "$G/mma_wg_cpu.npy"
build mma_wg_chains tests/gpu/mma_group_decode.mk --mma=warpgroup --mma-chains 4
cp "$G/mma_wg_cpu.npy" "$G/mma_wg_chains_cpu.npy"
build rows tests/gpu/chunk_attention_decode.mk
echo "$MKDSL run tests/gpu/chunk_attention_decode.mk --device cpu --random-weights 7 --tokens $MMA_TOKENS --max-new 0 --dump-logits $G/rows_cpu.npy"
"$MKDSL" run tests/gpu/chunk_attention_decode.mk --device cpu --random-weights 7 --tokens "$MMA_TOKENS" --max-new 0 \
  --dump-logits "$G/rows_cpu.npy"

# The metadata must carry what gpu_parity.py reads.
for m in "$G"/tiny.meta.json "$G"/llama1b.meta.json "$G"/shipped/*.meta.json; do
  python3 - "$m" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
need = ["vocab", "hidden", "layers", "heads", "kv_heads", "head_dim", "ffn", "rope_theta", "rope_factor",
        "rope_low_freq", "rope_high_freq", "rope_orig_ctx", "rms_eps", "max_seq"]
cv = m.get("config_values") or {}
miss = [k for k in need if k not in cv]
if miss or m.get("arch") != "sm_90a":
    sys.exit(f"{sys.argv[1]}: missing config_values {miss} or arch {m.get('arch')} != sm_90a")
print(f"{sys.argv[1]}: config {m.get('config')}, grid {m['grid']} x {m['block']}, "
      f"{sum(1 for t in m['tensors'] if t.get('kind') == 'weight')} weights, "
      + ", ".join(f"{k}={cv[k]}" for k in need))
EOF
done

# ptxas accepts each kernel (catches a bad PTX here rather than on the device's time).
PTXAS=${MKDSL_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
if [ -x "$PTXAS" ]; then
  for p in "$G"/*.ptx "$G"/shipped/*.ptx; do
    "$PTXAS" -arch=sm_90a "$p" -o /tmp/gpu-prepare-check.cubin
    echo "ptxas -arch=sm_90a $p: ok"
  done
  rm -f /tmp/gpu-prepare-check.cubin
else
  echo "no ptxas here; skipping the PTX check"
fi

step "gzip the kernels"
gzip -6 "$G"/*.ptx "$G"/shipped/*.ptx

step "$G/PREPARED.txt"
{
  echo "prepared: $(date -u +%Y-%m-%dT%H:%M:%SZ) by scripts/gpu-prepare.sh on $(uname -nm)"
  echo "git: $(git rev-parse HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD 2>/dev/null || echo ' (working tree differs from HEAD)')"
  echo "mkdsl: $("$MKDSL" --version 2>&1 | head -1)"
  echo "uncommitted changes (sha256 of git diff HEAD): $(git diff HEAD 2>/dev/null | sha256sum | cut -c1-16)"
  git status --short 2>/dev/null | sed 's/^/  /'

  echo "tokens (tests/data): $TOKENS"
  echo "drop-signal task: $DROP_TASK"
  echo "build options of every kernel (MKDSL_BUILD_OPTIONS): ${MKDSL_BUILD_OPTIONS:-none}"
  echo "files:"
  (cd "$G" && find . -type f ! -name PREPARED.txt | sort | xargs sha256sum | sed 's/^/  /')
} > "$G/PREPARED.txt"
cat "$G/PREPARED.txt"

step "size"
du -sh "$G"
SIZE_KIB=$(du -sk "$G" | cut -f1)
if [ "$SIZE_KIB" -gt $((LIMIT_MIB * 1024)) ]; then
  echo "$G is ${SIZE_KIB} KiB, over ${LIMIT_MIB} MiB: the device tool carries at most 64 MiB" >&2
  exit 1
fi
echo "ok: $G is $((SIZE_KIB / 1024)) MiB (limit 64 MiB with the working tree)"
