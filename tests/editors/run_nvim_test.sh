#!/usr/bin/env bash
# ctest's editors_nvim_lsp: Neovim (headless) drives `mkdsl lsp` through editors/nvim/lua/mkdsl.lua
# (tests/editors/nvim_lsp_test.lua says what it checks).
#   bash tests/editors/run_nvim_test.sh --mkdsl build/tools/mkdsl/mkdsl [--nvim PATH]
# Exit: 0 passed, 1 failed, 77 skipped (no Neovim 0.7+ here; scripts/setup.sh installs it).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
MKDSL= NVIM=${MKDSL_NVIM:-nvim}
while (($#)); do
  case $1 in
    --mkdsl) MKDSL=$2; shift 2 ;;
    --nvim) NVIM=$2; shift 2 ;;
    *) echo "run_nvim_test.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n $MKDSL && -x $MKDSL ]] || { echo "FAIL: --mkdsl ($MKDSL) is not an executable" >&2; exit 1; }
MKDSL=$(cd "$(dirname "$MKDSL")" && pwd)/$(basename "$MKDSL")

if ! command -v "$NVIM" >/dev/null 2>&1; then
  echo "SKIP: Neovim ($NVIM) is not installed; scripts/setup.sh installs it (apt-get install neovim)"
  exit 77
fi
version=$("$NVIM" --version 2>/dev/null | sed -nE '1s/^NVIM v([0-9]+)\.([0-9]+).*/\1 \2/p')
read -r major minor <<<"$version"
if [[ -z ${major:-} ]] || ((major == 0 && minor < 7)); then
  echo "SKIP: $("$NVIM" --version | head -n1) is older than Neovim 0.7, which the snippet needs"
  exit 77
fi

# A private home for Neovim (its LSP log, shada, swap files), removed afterwards.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME=$tmp/config XDG_DATA_HOME=$tmp/data XDG_STATE_HOME=$tmp/state XDG_CACHE_HOME=$tmp/cache
export MKDSL_BIN=$MKDSL MKDSL_SOURCE_DIR=$ROOT

# --clean: no user config or plugins, but the runtime's filetype detection is on (which calls *.mk
# `make`; the snippet must win). The Lua script exits by itself; `timeout` is a last resort.
timeout -k 5 "${MKDSL_NVIM_TEST_TIMEOUT:-240}" \
  "$NVIM" --headless --clean -i NONE -n -c "luafile $HERE/nvim_lsp_test.lua" </dev/null
rc=$?
if ((rc != 0)); then
  ((rc == 124 || rc == 137)) && echo "FAIL: Neovim did not finish within ${MKDSL_NVIM_TEST_TIMEOUT:-240}s" >&2
  # Neovim's LSP log holds the server's stderr and the client's errors.
  for f in "$tmp"/state/nvim/lsp.log "$tmp"/cache/nvim/lsp.log; do
    [[ -s $f ]] && { echo "---- $f (last 60 lines)"; tail -n 60 "$f"; }
  done
  exit 1
fi
