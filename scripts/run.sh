#!/usr/bin/env bash
# Set up and run the main job: scripts/setup.sh (packages + build), then the compiler on the
# flagship example (check, verified schedule) and a decode of the tiny model on the CPU interpreter.
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

# ---- Later: `mkdsl build "$MODEL" -o build/llama.ptx` once the NVPTX backend exists, and the
# ---- decode on the GPU runtime.

echo "== summary"
printf '  %s\n' "${summary[@]}"
echo "  done in $((SECONDS - start))s"
