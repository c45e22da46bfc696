#!/usr/bin/env bash
# All GPU checks in one run, on the GPU machine (issue 5; the benchmark of issue 6 goes at the
# marked place below). Needs build-gpu/ from scripts/gpu-prepare.sh (made on the build machine:
# mkdsl cannot be built on the GPU machine) and python3 with torch, transformers, safetensors, numpy.
#
#   bash scripts/gpu-prepare.sh                       # here
#   device run: bash scripts/gpu-check.sh             # carry ["build-gpu"]; results under $OUT
#
# Checks, in order (each one's stdout/stderr in logs/NAME.log inside results.tar.gz):
#   env            nvidia-smi, library versions, build-gpu/PREPARED.txt
#   golden-tiny    mkrt-run on tests/data's tiny goldens vs transformers f32/bf16 and the CPU interpreter
#   fault          the --test-drop-signal kernel must stop with the timeout record, not hang
#   mma            tests/gpu/mma_decode.mk (mma and mma_nt on their scalar lowering): every step's logits
#                  equal the CPU interpreter's (rel L2 <= 1e-6: the same summation order and roundings)
#   mma-tc         tests/gpu/mma_tensor_decode.mk (mma and mma_nt on mma.sync, f16 and bf16): every step's
#                  logits against the CPU interpreter's (rel L2 <= 1e-5: another summation order)
#   mma-wg         tests/gpu/mma_group_decode.mk (mma and mma_nt on wgmma, f16 and bf16, tiles shared
#                  unevenly between warpgroups): the same comparison (rel L2 <= 1e-5)
#   mma-wg-chains  the same kernel built with --mma-chains 4 (k steps over independent accumulator sets)
#   rows           tests/gpu/chunk_attention_decode.mk (row_sum/max/min, repeat_rows/cols, a chunk-shaped
#                  attention): logits against the interpreter's (rel L2 <= 1e-5: exp and the summation
#                  order differ; 4.45e-07 measured on an H200, bench/results/2026-12-03-rows-check)
#   prefill        examples/llama_tiny.mk's prefill_logits step in chunks (16+8 and 5+16+3 tokens) on
#                  tests/data's weights: every prompt position's logits against transformers float32
#                  (rel L2 <= 5e-3) and the decode step's (<= 1e-2), the gates of
#                  tests/e2e/prefill_test.cpp; then its prefill step and the decode step from the
#                  caches it left, in one model (build-gpu/mk-prefill-check)
#   prefill-tiles  the same on examples/llama.mk's tiny config (build-gpu/shipped/llama.tiny.ptx: the
#                  same model, its prefill tasks over two weight tiles each)
#   memcheck-prefill   the prefill check under compute-sanitizer memcheck
#   prefill-time   INFO: the Llama-3.2-1B prefill step (build-gpu/llama1b.ptx, random weights) on
#                  PREFILL_TIME_TOKENS prompts (default "128 512"), PREFILL_TIME_RUNS runs each (default 5):
#                  the prefill part of the time to first token (sum of the chunks' GPU times), median
#   prefill-ab     INFO: the prefill step of llama1b.ptx and of each v-*.ptx with one (gpu-prepare.sh's
#                  VARIANTS, e.g. "warp:--mma=warp") in turn, PREFILL_AB_ROUNDS rounds (default 3) of
#                  3 runs at PREFILL_AB_TOKENS tokens (default 512): a median per kernel and round
#   parity-STEM.CONFIG   scripts/gpu_parity.py --steps all for every config of every examples/*.mk
#                  (build-gpu/shipped.txt): random HF weights, teacher-forced through every position of
#                  the KV cache, gated at every position against transformers float32; the per-position
#                  curve in parity.md and curve.tsv.gz (CHECKS="parity" runs them all)
#   prefill-parity-STEM.CONFIG   the same with --prefill-check for each shipped config with a
#                  prefill_logits step (chunk T): T + T/4 positions through decode and through prefill
#                  in two chunkings, each against transformers float32 (CHECKS="prefill-parity": all)
#   parity-hf-init INFO: the shipped Llama-3.2-1B the same way, with transformers' own initialisation
#   depth-2, depth-4, depth-8   diagnostic (INFO, not gated): the 1B shapes with fewer layers
#   memcheck, synccheck, racecheck   compute-sanitizer on the tiny model (the 24 golden steps)
#   memcheck-llama-3.2-1b   extra (INFO, not gated): memcheck on the 1B kernel, 3 steps
#   variants       (issue 6, INFO) each build-gpu/v-*.ptx (gpu-prepare.sh's VARIANTS; "--config llama_3_8b" in a
#                  variant's options builds the 8B instead, timed and traced but not compared) against llama1b.ptx:
#                  step time on random weights (VARIANT_STEPS teacher-forced steps, default 64), logits compared
#                  with llama1b's, and the trace summary of traced variants (their trace JSON, of the last step,
#                  in results.tar.gz). VARIANT_WINDOW="P N" times the benchmark's positions instead: P prompt
#                  steps, then N greedy ones, whose per-token latency is the result (no logit comparison:
#                  greedy tokens on random weights diverge at near-ties; the parity checks cover correctness)
#   benchmark      (issue 6) scripts/bench.py: copy bandwidth, mkdsl vs torch eager / torch.compile step time
#                  at BENCH_CONTEXTS (default "512 4096") for each of BENCH_MODELS (default "llama-3.2-1b";
#                  "llama-3-8b" is build-gpu/llama8b.*); FAIL without running when a parity check failed;
#                  and (issue 18) its prefill rows, time to first token at BENCH_PREFILL prompt lengths
#                  (e.g. "128 512 2048"; unset: none, so the decode run keeps its time; BENCH_SKIP_DECODE=1: prefill only;
#                  torch.compile compiles each shape, bench.py leaving 150 s for the first and 50 for each later one:
#                  a shape the budget has no time for is reported as torch.compile not run, and the check fails)
#   bench-mma      (issue 18, only when CHECKS names it) scripts/bench_mma.py: bench/mma/proj.mk's products
#                  at the 1B's projection shapes against torch.matmul, rounds interleaved, parity against torch
#   profile-prefill  (INFO, only when CHECKS names it) ncu over one launch of the 1B's prefill step: tensor
#                  pipes, warp stalls, L2 and shared-memory throughput (logs/profile-prefill.log)
# Output in $OUT (at most 8 files come back from the device tool): summary.md (the PASS/FAIL table),
# gpu-check.log (this console), results.tar.gz (every log, parity.json/.md, the tiny logits), and
# the parity JSONs, bench.json and bench.md. Exit status 0 when every check passed (SKIP and INFO rows allowed), 1 otherwise.
#
# Environment: OUT (default ./build-gpu-check), GPU_DIR (default build-gpu), WORK (default
# /tmp/mkdsl-gpu-check), GPU_CHECK_BUDGET_S (default 440: the checks' own time budget; later
# checks get what is left), SEED_TINY (0), SEED_1B (1), STEPS (64: the depth sweep's steps), PROMPT
# (16), CHECKS (a space-separated subset of the names above to run, e.g. CHECKS="parity memcheck";
# default all),
# BENCH_CONTEXTS ("512 4096"), BENCH_MODELS ("llama-3.2-1b"), BENCH_PREFILL (unset: no prefill rows),
# BENCH_SKIP_DECODE (0), BENCH_PROFILE_PREFILL (0; 1: torch.compile's prefill kernels profiled, one
# graph replay a prefill row, in torch-profile.txt), VARIANT_STEPS (64), VARIANT_WINDOW (unset), PREFILL_PARITY_TOKENS (unset:
# T + T/4 for each model).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/build-gpu-check}   # build* is ignored by git
G=${GPU_DIR:-build-gpu}
W=${WORK:-/tmp/mkdsl-gpu-check}
BUDGET_S=${GPU_CHECK_BUDGET_S:-440}
STEPS=${STEPS:-64}
PROMPT=${PROMPT:-16}
SEED_TINY=${SEED_TINY:-0}
SEED_1B=${SEED_1B:-1}
export PYTHONUNBUFFERED=1
START=$(date +%s)

rm -rf "$W"
mkdir -p "$W/logs" "$W/tmp" "$OUT"
CONSOLE=$W/gpu-check.log
say() { echo "$*" | tee -a "$CONSOLE"; }

NAMES=(); RESULTS=(); SECS=(); DETAILS=()
record() {  # NAME RESULT SECONDS DETAIL
  NAMES+=("$1"); RESULTS+=("$2"); SECS+=("$3"); DETAILS+=("$4")
  say "[$(date -u +%H:%M:%S)] $1: $2 ($3 s) $4"
}
left() { echo $((BUDGET_S - ($(date +%s) - START))); }
cap() {  # the smaller of $1 and what is left of the budget (at least 5 s)
  local l; l=$(left); [ "$l" -lt 5 ] && l=5
  [ "$1" -lt "$l" ] && echo "$1" || echo "$l"
}
# run NAME TIMEOUT CMD...: stdout+stderr to logs/NAME.log; sets RC and ELAPSED.
run() {
  local name=$1 t=$2; shift 2
  local log=$W/logs/$name.log t0
  say "[$(date -u +%H:%M:%S)] $name (limit ${t} s): $*"
  { echo "\$ $*"; echo "[limit ${t} s, started $(date -u +%FT%TZ)]"; } > "$log"
  t0=$(date +%s.%N)
  timeout -k 10 "$t" "$@" >> "$log" 2>&1
  RC=$?
  ELAPSED=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")
  echo "[exit status $RC after $ELAPSED s]" >> "$log"
}
CHECKS=${CHECKS:-}
want() { [ -z "$CHECKS" ] || [[ " $CHECKS " == *" $1 "* ]]; }
last_line() { grep -E "$1" "$2" | tail -1 | cut -c1-400; }

TINY_TOKENS=$(tr -d ' \n' < tests/data/tiny_llama_tokens.txt)
chmod +x "$G/mkrt-run" "$G/mk-prefill-check" 2>/dev/null
# gpu-prepare.sh gzips the kernels for the carry.
for z in "$G"/*.ptx.gz "$G"/shipped/*.ptx.gz; do
  [ -f "$z" ] && gunzip -kf "$z"
done

say "# mkdsl GPU checks: bash scripts/gpu-check.sh ($(date -u +%FT%TZ), budget ${BUDGET_S} s)"

# ---- env ---------------------------------------------------------------------------------------
{
  echo "\$ nvidia-smi"; nvidia-smi
  echo; echo "\$ nvidia-smi --query-gpu=..."
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit,persistence_mode,compute_mode --format=csv
  echo; echo "\$ nvidia-smi -q -d CLOCK"; nvidia-smi -q -d CLOCK
  echo; uname -a; nproc; free -g
  echo; python3 -c "import sys, torch, transformers, safetensors, numpy; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'transformers', transformers.__version__, 'safetensors', safetensors.__version__, 'numpy', numpy.__version__); print('device', torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0))"
  echo; compute-sanitizer --version
  echo; ls -la "$G"; cat "$G/PREPARED.txt"
} > "$W/logs/env.log" 2>&1
GPU_LINE=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)
missing=""
for f in mkrt-run tiny.ptx tiny.meta.json llama1b.ptx llama1b.meta.json tiny_drop.ptx tiny_drop.meta.json tiny_cpu.npy shipped.txt; do
  [ -f "$G/$f" ] || missing="$missing $f"
done
if [ -n "$GPU_LINE" ] && [ -z "$missing" ]; then
  record env PASS 0 "$GPU_LINE; $(grep -E '^git:' "$G/PREPARED.txt" 2>/dev/null)"
else
  record env FAIL 0 "GPU: '${GPU_LINE:-none}'; missing in $G:${missing:- nothing}"
fi

# ---- golden-tiny: mkrt-run on the committed goldens ---------------------------------------------
if want golden-tiny; then
run golden-tiny "$(cap 120)" python3 scripts/gpu_parity.py --golden tests/data --cpu-logits "$G/tiny_cpu.npy" \
  --ptx "$G/tiny.ptx" --mkrt "$G/mkrt-run" --out "$W/golden-tiny"
D=$(last_line '^PARITY' "$W/logs/golden-tiny.log")
[ $RC -eq 0 ] && record golden-tiny PASS "$ELAPSED" "$D" || record golden-tiny FAIL "$ELAPSED" "exit $RC: ${D:-see logs/golden-tiny.log}"
fi

# ---- fault: a dropped signal must end in the timeout record, not a hang --------------------------
if want fault; then
run fault "$(cap 60)" "$G/mkrt-run" --ptx "$G/tiny_drop.ptx" --random-weights 7 --tokens 1,2,3 --max-new 0 --timeout-ms 300
MSG=$(grep -oE 'task [0-9]+ on SM [0-9]+ waited for counter [0-9]+ \(expected [0-9]+, saw [0-9]+\) past the timeout of 300 ms' "$W/logs/fault.log" | head -1)
FAST=$(python3 -c "import sys; print(int(float(sys.argv[1]) < 30))" "$ELAPSED")
if [ $RC -ne 0 ] && [ $RC -ne 124 ] && [ $RC -ne 137 ] && [ -n "$MSG" ] && [ "$FAST" = 1 ]; then
  record fault PASS "$ELAPSED" "exit $RC in $ELAPSED s: \"$MSG\""
else
  case $RC in 0) why="exit 0: the broken kernel ran to the end";; 124|137) why="HUNG: killed by timeout after $ELAPSED s";; *) why="exit $RC";; esac
  record fault FAIL "$ELAPSED" "$why; timeout message: '${MSG:-none}'; $(last_line 'error' "$W/logs/fault.log")"
fi
fi

# ---- mma, mma-tc: the matrix products on the GPU against the interpreter ----------------------------
mma_check() {  # NAME STEM TOLERANCE: build-gpu/STEM.ptx against STEM_cpu.npy
  local name=$1 stem=$2 tol=$3
  want "$name" || return 0
  if [ -f "$G/$stem.ptx" ] && [ -f "$G/${stem}_cpu.npy" ]; then
    run "$name" "$(cap 60)" "$G/mkrt-run" --ptx "$G/$stem.ptx" --random-weights 7 --tokens "$(cat "$G/mma_tokens.txt")" \
      --max-new 0 --compare-logits "$G/${stem}_cpu.npy" --tolerance "$tol"
    D=$(last_line 'relative L2' "$W/logs/$name.log")
    [ $RC -eq 0 ] && record "$name" PASS "$ELAPSED" "$D" || record "$name" FAIL "$ELAPSED" "exit $RC: ${D:-see logs/$name.log}"
  else
    record "$name" FAIL 0 "missing $G/$stem.ptx or ${stem}_cpu.npy: run scripts/gpu-prepare.sh"
  fi
}
mma_check mma mma 1e-6
mma_check mma-tc mma_tc 1e-5
mma_check mma-wg mma_wg 1e-5
mma_check mma-wg-chains mma_wg_chains 1e-5
mma_check rows rows 1e-5

# ---- prefill: the prefill kernel's chunks against transformers and the decode kernel ---------------
prefill_check() {  # NAME LIMIT KERNEL [compute-sanitizer TOOL]
  local name=$1 lim=$2 kernel=$3; shift 3
  want "$name" || return 0
  if [ ! -x "$G/mk-prefill-check" ] || [ ! -f "$kernel" ]; then
    record "$name" FAIL 0 "missing $G/mk-prefill-check or $kernel: run scripts/gpu-prepare.sh"
    return
  fi
  local pre=()
  [ $# -gt 0 ] && pre=(compute-sanitizer --tool "$2" --error-exitcode 3 --print-limit 50)
  run "$name" "$(cap "$lim")" "${pre[@]}" "$G/mk-prefill-check" --kernel "$kernel" \
    --weights tests/data/tiny_llama.safetensors --tokens tests/data/tiny_llama_tokens.txt \
    --golden-f32 tests/data/tiny_llama_logits_f32.npy ${pre:+--timeout-ms 120000}
  local log=$W/logs/$name.log D S
  D=$(grep -E '^chunks |^prefill of' "$log" | tr '\n' ';' | cut -c1-500)
  S=$(grep -E 'ERROR SUMMARY' "$log" | sed 's/^=* *//' | head -1)
  if [ $RC -eq 0 ]; then
    record "$name" PASS "$ELAPSED" "${S:+$S; }$D"
  else
    record "$name" FAIL "$ELAPSED" "exit $RC: ${S:+$S; }${D:-$(last_line 'error|FAIL' "$log")}"
  fi
}
prefill_check prefill 60 "$G/tiny.ptx"
# The tiny config of examples/llama.mk: the same model with two weight tiles per projection task.
prefill_check prefill-tiles 60 "$G/shipped/llama.tiny.ptx"
prefill_check memcheck-prefill 300 "$G/tiny.ptx" compute-sanitizer memcheck
if want prefill-time; then
  for n in ${PREFILL_TIME_TOKENS:-128 512}; do
    if [ "$(left)" -lt 30 ]; then record "prefill-time-$n" INFO 0 "not run: the time budget is spent"; continue; fi
    run "prefill-time-$n" "$(cap 240)" "$G/mk-prefill-check" --kernel "$G/llama1b.ptx" --random-weights 7 \
      --time-tokens "$n" --runs "${PREFILL_TIME_RUNS:-5}"
    record "prefill-time-$n" INFO "$ELAPSED" "exit $RC: $(last_line '^prefill of|error' "$W/logs/prefill-time-$n.log")"
  done
fi
# A/B of the prefill step: llama1b.ptx and each v-*.ptx with a prefill step, in turn, round after round.
if want prefill-ab; then
  for r in $(seq "${PREFILL_AB_ROUNDS:-3}"); do
    for p in "$G/llama1b.ptx" "$G"/v-*.ptx; do
      [ -f "$p" ] && grep -q '"prefill"' "${p%.ptx}.meta.json" || continue
      cn="prefill-ab-$(basename "$p" .ptx)-$r"
      if [ "$(left)" -lt 30 ]; then record "$cn" INFO 0 "not run: the time budget is spent"; continue; fi
      run "$cn" "$(cap 120)" "$G/mk-prefill-check" --kernel "$p" --random-weights 7 \
        --time-tokens "${PREFILL_AB_TOKENS:-512}" --runs 3
      record "$cn" INFO "$ELAPSED" "exit $RC: $(last_line '^prefill of|error' "$W/logs/$cn.log")"
    done
  done
fi

# One shipped config (a shipped.txt line) through scripts/gpu_parity.py, recorded as check CN:
# CN SNAME SFILE SCONFIG [more gpu_parity.py options].
shipped_parity() {
  local cn=$1 sname=$2 sfile=$3 sconfig=$4; shift 4
  run "$cn" "$(cap 480)" python3 scripts/gpu_parity.py --meta "$G/shipped/$sname.meta.json" \
    --ptx "$G/shipped/$sname.ptx" --mkrt "$G/mkrt-run" --out "$W/$cn" --name "$sname" --max-shard-size 2GB \
    --work "$W/tmp" --mkrt-timeout 400 "$@" < /dev/null
  D=$(last_line '^PARITY' "$W/logs/$cn.log")
  [ $RC -eq 0 ] && record "$cn" PASS "$ELAPSED" "$sfile --config $sconfig: $D" ||
    record "$cn" FAIL "$ELAPSED" "$sfile --config $sconfig: exit $RC: ${D:-see logs/$cn.log}"
  rm -rf "$W/tmp"
}

# ---- parity against transformers at every position, for every shipped config ----------------------
# gpu-prepare.sh's shipped.txt lists each config of examples/*.mk; each is teacher-forced through
# every position of its KV cache (gpu_parity.py --steps all) against transformers float32. The tiny
# model of examples/llama_tiny.mk (seed 0) has tests/data's weights, which the check confirms.
while read -r SNAME SFILE SCONFIG; do
  [ -n "$SNAME" ] || continue
  CN="parity-$SNAME"
  want "$CN" || want parity || continue
  SMETA="$G/shipped/$SNAME.meta.json"
  SARGS=(--steps all --prompt "$PROMPT")
  SPARAMS=$(python3 -c "import json,sys; v=json.load(open(sys.argv[1]))['config_values']; print(v['vocab'] * v['hidden'])" "$SMETA" 2>/dev/null || echo 0)
  if [ "$SNAME" = llama_tiny.tiny ]; then
    SARGS+=(--seed "$SEED_TINY" --golden-weights tests/data/tiny_llama.safetensors)
  else
    SARGS+=(--seed "$SEED_1B")
  fi
  # The greedy check (informational) costs a second pass of every position: the small models only.
  [ "$SPARAMS" -gt 1000000 ] && SARGS+=(--no-greedy)
  shipped_parity "$CN" "$SNAME" "$SFILE" "$SCONFIG" "${SARGS[@]}"
done < "$G/shipped.txt"

# ---- prefill parity of the shipped models (issue 18) ------------------------------------------------
# Each shipped config with a prefill_logits step of T tokens a chunk, on random HF weights:
# PREFILL_PARITY_TOKENS tokens (default T + T/4: a whole chunk and a partial one) through the decode step and through
# prefill_logits in two chunkings, every position against transformers float32 (gpu_parity.py
# --prefill-check: issue 5's gate on both paths), then decode from a prefill's caches.
while read -r SNAME SFILE SCONFIG; do
  [ -n "$SNAME" ] || continue
  CN="prefill-parity-$SNAME"
  want "$CN" || want prefill-parity || continue
  SMETA="$G/shipped/$SNAME.meta.json"
  PT=$(python3 -c "import json,sys; sys.path.insert(0, 'scripts'); from gpu_parity import prefill_chunk_tokens as t; n = t(json.load(open(sys.argv[1]))); print(n + n // 4 if n else 0)" "$SMETA" 2>/dev/null || echo 0)
  if [ "$PT" -eq 0 ]; then record "$CN" SKIP 0 "$SFILE --config $SCONFIG: no prefill_logits step"; continue; fi
  PT=${PREFILL_PARITY_TOKENS:-$PT}
  if [ "$(left)" -lt 60 ]; then record "$CN" FAIL 0 "not run: the time budget is spent"; continue; fi
  shipped_parity "$CN" "$SNAME" "$SFILE" "$SCONFIG" --prefill-check "$G/mk-prefill-check" --steps "$PT" \
    --prompt "$PT" --seed "$SEED_1B" --no-greedy
done < "$G/shipped.txt"

# ---- depth sweep (diagnostic, not gated: INFO rows) -----------------------------------------------
# The Llama-3.2-1B shapes with 2, 4 and 8 layers: how the distance to transformers float32 grows
# with depth, for mkdsl and for transformers' own bf16 run. Skipped when less than 90 s are left.
for L in 2 4 8; do
  want "depth-$L" || continue
  if [ ! -f "$G/llama1b_l$L.ptx" ] || [ "$(left)" -lt 90 ]; then
    record "depth-$L" INFO 0 "not run (no $G/llama1b_l$L.ptx, or the budget is short)"
    continue
  fi
  run "depth-$L" "$(cap 120)" python3 scripts/gpu_parity.py --meta "$G/llama1b_l$L.meta.json" --ptx "$G/llama1b_l$L.ptx" \
    --mkrt "$G/mkrt-run" --out "$W/depth-$L" --steps "$STEPS" --prompt "$PROMPT" --seed "$SEED_1B" \
    --name "llama-3.2-1b-$L-layers" --max-shard-size 1GB --work "$W/tmp" --no-greedy
  D=$(last_line '^PARITY' "$W/logs/depth-$L.log")
  B=$(python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['comparisons']['hf_bf16_vs_hf_f32']['all']; print(f\"transformers bf16 vs f32 worst {c['worst_rel_l2']:.3g}, mean {c['mean_rel_l2']:.3g}\")" "$W/depth-$L/parity.json" 2>/dev/null)
  record "depth-$L" INFO "$ELAPSED" "exit $RC: ${D:-see logs/depth-$L.log}; ${B:-}"
done
rm -rf "$W/tmp"   # the checkpoints (3 GB for the 1B)

# ---- compute-sanitizer on the tiny model ----------------------------------------------------------
# Teacher-forced on the golden weights and tokens, logits checked against the interpreter's; a long
# wait timeout, since the tools slow the kernel down by orders of magnitude.
sanitize() {  # NAME TOOL LIMIT PASS-RESULT MKRT-ARGS...   (PASS-RESULT: PASS, or INFO for an extra run)
  local name=$1 tool=$2 lim=$3 okres=$4; shift 4
  want "$name" || return 0
  local failres=FAIL; [ "$okres" = INFO ] && failres=INFO
  if [ "$(left)" -lt 20 ]; then
    record "$name" "$failres" 0 "not run: the time budget is spent"
    return
  fi
  run "$name" "$(cap "$lim")" compute-sanitizer --tool "$tool" --error-exitcode 3 --print-limit 50 \
    "$G/mkrt-run" "$@" --max-new 0 --timeout-ms 120000
  local log=$W/logs/$name.log sum bad steps cmp
  sum=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY' "$log" | sed 's/^=* *//' | tr '\n' ';' | cut -c1-300)
  # errors fail; racecheck's warnings (possible hazards) are reported in the detail
  bad=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY' "$log" | grep -E 'SUMMARY: [1-9]' | grep -cvE '\(0 errors')
  steps=$(last_line 'mkrt-run: [0-9]+ steps' "$log" | sed 's/^mkrt-run: //')
  cmp=$(last_line 'logits against' "$log" | sed 's/.*worst/worst/')
  if [ $RC -eq 0 ] && [ -n "$sum" ] && [ "$bad" -eq 0 ]; then
    record "$name" "$okres" "$ELAPSED" "clean: $sum $steps${cmp:+; $cmp}"
  elif [ $RC -eq 124 ] || [ $RC -eq 137 ]; then
    record "$name" "$failres" "$ELAPSED" "TIMEOUT (killed after the limit); ${sum:-no summary}"
  else
    record "$name" "$failres" "$ELAPSED" "NOT CLEAN or failed, exit $RC: ${sum:-no summary}; $(last_line 'error|Error' "$log")"
  fi
}
# The tiny model on the golden weights and all 24 golden tokens (two attention chunks), logits
# checked against the interpreter's (the tools must not change the result; 5e-3 covers the
# kernel's different summation order, as gpu_parity.py's CPU_GATE).
TINY_ARGS=(--ptx "$G/tiny.ptx" --weights tests/data/tiny_llama.safetensors --tokens "$TINY_TOKENS"
           --compare-logits "$G/tiny_cpu.npy" --tolerance 5e-3)
sanitize memcheck memcheck 150 PASS "${TINY_ARGS[@]}"
sanitize synccheck synccheck 150 PASS "${TINY_ARGS[@]}"
sanitize racecheck racecheck 180 PASS "${TINY_ARGS[@]}"
# Extra, not gated: memcheck on the Llama-3.2-1B kernel, random weights, 3 steps.
sanitize memcheck-llama-3.2-1b memcheck 120 INFO --ptx "$G/llama1b.ptx" --random-weights 7 --tokens 1,2,3

# ---- parity-hf-init (INFO) --------------------------------------------------------------------------
# The shipped Llama-3.2-1B with transformers' own initialisation (std 0.02; the
# gate's weights are the scaled init above), every position.
if want parity-hf-init; then
  run parity-hf-init "$(cap 240)" python3 scripts/gpu_parity.py --meta "$G/shipped/llama.llama_3_2_1b.meta.json" \
    --ptx "$G/shipped/llama.llama_3_2_1b.ptx" --mkrt "$G/mkrt-run" --out "$W/parity-hf-init" --steps all \
    --init transformers --seed "$SEED_1B" --name llama.llama_3_2_1b-transformers-init --max-shard-size 2GB \
    --work "$W/tmp" --no-greedy
  D=$(last_line '^PARITY' "$W/logs/parity-hf-init.log")
  record parity-hf-init INFO "$ELAPSED" "exit $RC: ${D:-see logs/parity-hf-init.log}"
  rm -rf "$W/tmp"
fi

# ---- variants: speed experiments (INFO) ------------------------------------------------------------
# The same random weights and tokens for every kernel; llama1b.ptx's logits are the reference.
if want variants; then
  # Teacher-forced (the same 64 tokens for every variant): greedy decoding on random weights
  # meets near-ties, where kernels that sum in another order pick other tokens and then diverge.
  read -r VPROMPT VNEW <<< "${VARIANT_WINDOW:-${VARIANT_STEPS:-64} 0}"
  VTOK=$(python3 -c "import sys; print(','.join(str((i * 7919) % 128256) for i in range(1, int(sys.argv[1]) + 1)))" "$VPROMPT")
  mkdir -p "$W/variants"
  for p in "$G/llama1b.ptx" "$G"/v-*.ptx; do
    [ -f "$p" ] || continue
    name=$(basename "$p" .ptx)
    VARGS=(--ptx "$p" --random-weights 3 --tokens "$VTOK" --max-new "$VNEW")
    config=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['config'])" "${p%.ptx}.meta.json")
    if [ "$VNEW" != 0 ]; then :
    elif [ "$name" = llama1b ]; then VARGS+=(--dump-logits "$W/variants/ref.npy")
    elif [ "$config" = llama_3_2_1b ]; then VARGS+=(--compare-logits "$W/variants/ref.npy" --tolerance 2e-2)
    fi  # a variant of another config (e.g. "--config llama_3_8b --trace") is timed and traced only
    grep -q '"trace"' "${p%.ptx}.meta.json" && VARGS+=(--trace "$W/variants/$name.trace.json")
    run "variant-$name" "$(cap 180)" "$G/mkrt-run" "${VARGS[@]}"
    if [ "$VNEW" != 0 ]; then timing=$(last_line 'per-token latency' "$W/logs/variant-$name.log" | sed 's/.*per-token latency/per-token latency/')
    else timing=$(last_line 'step time' "$W/logs/variant-$name.log" | sed 's/.*step time/step time/')
    fi
    record "variant-$name" INFO "$ELAPSED" "exit $RC: $timing; $(last_line 'logits against' "$W/logs/variant-$name.log" | sed 's/.*worst/worst/')"
  done
fi

# ---- BENCHMARK (issue 6) --------------------------------------------------------------------------
# scripts/bench.py on the Llama-3.2-1B kernel: copy bandwidth, mkdsl's decode step time (mkrt-run's
# CUDA events) and the same model in PyTorch (eager; torch.compile max-autotune-no-cudagraphs in a
# CUDA graph), at each of BENCH_CONTEXTS (default "512 4096"). Correctness first: not run (FAIL)
# when a parity check of this run failed; when parity-llama.llama_3_2_1b ran, its parity.json is the
# benchmark's parity_ok, else bench.py runs a short parity itself (16 steps vs transformers f32).
# PASS means: parity ok and an mkdsl time for every context (the issue-6 speed targets are reported
# in the detail and bench.json, not gated here). JSON and table: $W/bench/bench.{json,md}, copied to $OUT.
if want benchmark; then
  bad_parity=""
  for i in "${!NAMES[@]}"; do
    case "${NAMES[$i]}" in golden-tiny|parity-*|prefill-parity-*) [ "${RESULTS[$i]}" = FAIL ] && bad_parity="$bad_parity ${NAMES[$i]}";; esac
  done
  if [ -n "$bad_parity" ]; then
    record benchmark FAIL 0 "not run: parity failed in this run ($bad_parity)"
  elif [ "$(left)" -lt 60 ]; then
    record benchmark FAIL 0 "not run: the time budget is spent"
  else
    BLIM=$(cap 540)
    PJ=(); BM=()
    for m in ${BENCH_MODELS:-llama-3.2-1b}; do
      case $m in
        llama-3.2-1b) BM+=(--model "$m" "$G/llama1b.meta.json" "$G/llama1b.ptx")
          [ -f "$W/parity-llama.llama_3_2_1b/parity.json" ] && PJ=(--parity-json "llama-3.2-1b=$W/parity-llama.llama_3_2_1b/parity.json") ;;
        llama-3-8b) BM+=(--model "$m" "$G/llama8b.meta.json" "$G/llama8b.ptx") ;;
        *) say "BENCH_MODELS: unknown model $m (llama-3.2-1b, llama-3-8b)" ;;
      esac
    done
    PF=()
    case "${BENCH_PREFILL-}" in
      ""|none) PF=(--skip-prefill) ;;
      *) PF=(--prefill-tokens $BENCH_PREFILL) ;;
    esac
    [ "${BENCH_SKIP_DECODE:-0}" = 1 ] && PF+=(--skip-decode)
    [ "${BENCH_PROFILE_PREFILL:-0}" = 1 ] && PF+=(--profile-prefill "$W/bench/profile")
    run benchmark "$BLIM" python3 scripts/bench.py "${BM[@]}" \
      --mkrt "$G/mkrt-run" --out "$W/bench" --contexts ${BENCH_CONTEXTS:-512 4096} --seed "$SEED_1B" \
      --work "$W/bench-tmp" --deadline-s $((BLIM - 25)) "${PJ[@]}" "${PF[@]}"
    rm -rf "$W/bench-tmp"
    D=$(last_line '^BENCH' "$W/logs/benchmark.log")
    [ $RC -eq 0 ] && record benchmark PASS "$ELAPSED" "$D" || record benchmark FAIL "$ELAPSED" "exit $RC: ${D:-see logs/benchmark.log}"
    cp "$W/bench/bench.json" "$W/bench/bench.md" "$OUT/" 2>/dev/null
    [ -d "$W/bench/profile" ] && cat "$W/bench/profile"/*.txt > "$OUT/torch-profile.txt" 2>/dev/null
  fi
fi
# <<< end of the benchmark section

# ---- bench-mma: the matrix product alone against torch.matmul (only when named in CHECKS) -----------
# scripts/bench_mma.py on gpu-prepare.sh's mma_proj_*.ptx (bench/mma/proj.mk at Llama-3.2-1B's
# projection shapes for 512 tokens), interleaved rounds; PASS: every kernel ran and its parity held.
if [[ " $CHECKS " == *" bench-mma "* ]]; then
  KS=()
  for p in "$G"/mma_proj_*.ptx; do [ -f "$p" ] && KS+=(--kernel "$(basename "$p" .ptx | sed 's/^mma_proj_//')" "$p"); done
  run bench-mma "$(cap 300)" python3 scripts/bench_mma.py --mkrt "$G/mkrt-run" --out "$W/bench-mma" "${KS[@]}"
  D=$(grep -c '"parity_ok": true' "$W/logs/bench-mma.log")
  [ $RC -eq 0 ] && record bench-mma PASS "$ELAPSED" "$D kernels" || record bench-mma FAIL "$ELAPSED" "exit $RC: see logs/bench-mma.log"
  cp "$W/bench-mma/bench_mma.json" "$W/bench-mma/bench_mma.md" "$OUT/" 2>/dev/null
fi

# ---- profile-prefill: Nsight Compute over the 1B's prefill step (only when CHECKS names it) -------------
# One launch of llama1b.ptx's prefill entry on a 512-token chunk: the tensor pipes' activity, warp
# stall reasons, L2 and shared-memory throughput (INFO: whole-kernel figures, over all its ops; the
# trace of `mkdsl build --trace` says which op takes the time, this says what binds it).
if [[ " $CHECKS " == *" profile-prefill "* ]]; then
  run profile-prefill "$(cap 300)" ncu --clock-control none --kernel-name mk_step_prefill --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section SchedulerStats \
    "$G/mk-prefill-check" --kernel "$G/llama1b.ptx" --random-weights 7 --time-tokens 512 --runs 1 --timeout-ms 60000
  record profile-prefill INFO "$ELAPSED" "exit $RC: $(last_line 'Duration|ERROR|error' "$W/logs/profile-prefill.log")"
fi

# ---- summary ------------------------------------------------------------------------------------------
FAILED=0
for r in "${RESULTS[@]}"; do [ "$r" = PASS ] || [ "$r" = SKIP ] || [ "$r" = INFO ] || FAILED=1; done
{
  echo "# mkdsl GPU checks"
  echo
  echo "Command (device tool \`run\` on the GPU below, carry [\"build-gpu\"]): \`${CHECKS:+CHECKS=\"$CHECKS\" }bash scripts/gpu-check.sh\`,"
  echo "after \`bash scripts/gpu-prepare.sh\` on the build machine."
  echo
  echo "- date: $(date -u +%FT%TZ); total $(( $(date +%s) - START )) s of the command"
  echo "- GPU: ${GPU_LINE:-?}"
  echo "- $(python3 -c "import sys, torch, transformers; print('python', sys.version.split()[0], '| torch', torch.__version__, '| transformers', transformers.__version__)" 2>/dev/null)"
  echo "- $(compute-sanitizer --version 2>/dev/null | grep -i version | head -1)"
  grep -E '^(git|mkdsl|prepared):' "$G/PREPARED.txt" 2>/dev/null | sed 's/^/- /'
  echo
  echo "| check | result | seconds | detail |"
  echo "|---|---|---|---|"
  for i in "${!NAMES[@]}"; do
    echo "| ${NAMES[$i]} | ${RESULTS[$i]} | ${SECS[$i]} | $(echo "${DETAILS[$i]}" | sed 's/|/\\|/g') |"
  done
  echo
  [ $FAILED -eq 0 ] && echo "Overall: **PASS**" || echo "Overall: **FAIL**"
} > "$W/summary.md"
cat "$W/summary.md" | tee -a "$CONSOLE" > /dev/null
cat "$W/summary.md"

# ---- what comes back -------------------------------------------------------------------------------
cp "$W/summary.md" "$CONSOLE" "$OUT/" 2>/dev/null
# The parity.json of golden-tiny and of each shipped config are in results.tar.gz (at most 8 files
# come back from the device tool).
# Without the logits (.npy, tens of MB): the device tool returns files of at most 16 MiB.
tar -czf "$OUT/results.tar.gz" -C "$W" --exclude=tmp --exclude='*.npy' . 2>/dev/null
ls -la "$OUT"
exit $FAILED
