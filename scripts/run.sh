#!/usr/bin/env bash
# Set up and run the main job: scripts/setup.sh (packages + build), then the compiler on the
# flagship example.
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

# ---- MAIN JOB: LATER STEPS GO HERE -------------------------------------------------------------
# Once the backend and runtime exist, add (each appending a line to `summary`):
#   "$MKDSL" build "$MODEL" -o build/llama.ptx          # compile the decode-step megakernel
#   ...decode a few tokens of the tiny model (CPU interpreter; the GPU when one is present)...
# -------------------------------------------------------------------------------------------------

echo "== summary"
printf '  %s\n' "${summary[@]}"
echo "  done in $((SECONDS - start))s"
