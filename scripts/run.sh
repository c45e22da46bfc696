#!/usr/bin/env bash
# Set up and run the main job: scripts/setup.sh (packages + build), then the compiler on the
# flagship example (check, verified schedule, PTX and, when ptxas is installed, a cubin; an AMDGPU
# code object for an MI300X) and a decode of the tiny model on the CPU interpreter.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

bash scripts/setup.sh

MKDSL=build/tools/mkdsl/mkdsl
MODEL=examples/llama.mk
start=$SECONDS
summary=()

echo "== mkdsl check $MODEL"
if [[ ! -f $MODEL ]]; then
  echo "run: $MODEL does not exist yet" >&2
  exit 1
fi
"$MKDSL" check "$MODEL"
summary+=("check $MODEL: ok")

echo "== mkdsl build $MODEL --emit=schedule (Llama-3.2-1B on an H200: verified schedule)"
"$MKDSL" build "$MODEL" --emit=schedule -o build/llama.sched
"$MKDSL" build "$MODEL" --emit=schedule --format=html -o build/llama-schedule.html
summary+=("schedule: $(head -n 1 build/llama.sched | sed 's|^// mkdsl schedule: ||') -> build/llama.sched, build/llama-schedule.html")

TINY=examples/llama_tiny.mk
WEIGHTS=tests/data/tiny_llama.safetensors
echo "== mkdsl run $TINY --device cpu (decode a tiny random-weight Llama from its safetensors)"
ids=$("$MKDSL" run "$TINY" --device cpu --weights "$WEIGHTS" --tokens 1,2,3,4 --max-new 16)
echo "$ids"
summary+=("tiny decode on the CPU interpreter: $ids")

echo "== mkdsl build $MODEL -o build/llama.ptx (the Llama-3.2-1B megakernel for an H200, sm_90a)"
"$MKDSL" build "$MODEL" -o build/llama.ptx
summary+=("PTX: build/llama.ptx ($(wc -c <build/llama.ptx) bytes), metadata build/llama.meta.json")

# ptxas is optional (the CUDA toolkit is not a package here); found the way mkdsl finds it.
PTXAS=${MKDSL_PTXAS:-$(command -v ptxas || true)}
[[ -z $PTXAS && -x /usr/local/cuda/bin/ptxas ]] && PTXAS=/usr/local/cuda/bin/ptxas
if [[ -n $PTXAS ]]; then
  echo "== ptxas -arch=sm_90a -v build/llama.ptx -o build/llama.cubin"
  "$PTXAS" -arch=sm_90a -v build/llama.ptx -o build/llama.cubin >build/llama.ptxas.log 2>&1 ||
    { cat build/llama.ptxas.log >&2; echo "run: ptxas rejected build/llama.ptx" >&2; exit 1; }
  grep -E "Compiling entry|Used [0-9]+ registers|spill" build/llama.ptxas.log
  stats=$(sed -nE 's/.*Used ([0-9]+) registers.*/\1 registers/p' build/llama.ptxas.log | head -n 1)
  spills=$(sed -nE 's/.* ([0-9]+ bytes spill stores, [0-9]+ bytes spill loads).*/\1/p' build/llama.ptxas.log | head -n 1)
  summary+=("cubin: build/llama.cubin ($(wc -c <build/llama.cubin) bytes; mk_step: $stats, $spills)")
else
  echo "== ptxas not found (set MKDSL_PTXAS or install the CUDA toolkit): not assembling build/llama.ptx"
  summary+=("cubin: skipped, no ptxas")
fi

# The same model for an MI300X: a gfx942 code object linked by ld.lld (lld-19, a setup.sh
# package), with its registers, LDS and scratch from the code object metadata (-v).
echo "== mkdsl build $MODEL --target gfx942 -o build/llama-gfx942.hsaco -v (Llama-3.2-1B for an MI300X)"
"$MKDSL" build "$MODEL" --target gfx942 -o build/llama-gfx942.hsaco -v 2>build/llama-gfx942.hsaco.log ||
  { cat build/llama-gfx942.hsaco.log >&2; echo "run: no code object for gfx942" >&2; exit 1; }
cat build/llama-gfx942.hsaco.log
summary+=("code object: build/llama-gfx942.hsaco ($(wc -c <build/llama-gfx942.hsaco) bytes; $(sed -n 's/^gfx942: //p' build/llama-gfx942.hsaco.log))")

# ---- Later: the decode on the GPU runtime.

echo "== summary"
printf '  %s\n' "${summary[@]}"
echo "  done in $((SECONDS - start))s"
