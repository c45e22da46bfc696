#!/usr/bin/env bash
# Set-up: installs the packages the build needs (apt, only those missing), then configures and
# builds the project into build/ (Ninja, RelWithDebInfo). Safe to run any number of times; prints
# nothing about packages when they are all there.
#
# Environment: MK_JOBS=N  parallel build jobs (default: ninja's own choice)
set -euo pipefail

# Debian 12 packages. ptxas (CUDA toolkit) is optional and not installed here: without it
# `mkdsl build` still emits PTX, and the ptxas steps of the main job and tests are skipped.
PACKAGES=(
  build-essential cmake ninja-build
  antlr4 libantlr4-runtime-dev   # parser generator (4.7.2 tool) and C++ runtime (4.9)
  libfmt-dev doctest-dev
  clang-19 libclang-rt-19-dev     # sanitizer and libFuzzer builds (scripts/test.sh)
  llvm-19-dev llvm-19-tools       # the backend (libLLVM: NVPTX, AMDGPU) and FileCheck for its tests
  llvm-19                         # llvm-readelf, llvm-objdump, llvm-mc for the AMDGPU code object tests
  lld-19                          # ld.lld links the AMDGPU code objects (.hsaco)
  neovim                          # a real LSP client for tests/editors (0.7.2 on Debian 12)
)

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

missing=()
for pkg in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)
  [[ $status == ii* ]] || missing+=("$pkg")
done
# Node.js and npm package the VS Code extension (tests/editors): any install that provides the
# commands will do (Debian's nodejs and npm, or NodeSource's nodejs, which includes npm).
command -v npm >/dev/null || missing+=(nodejs npm)
if ((${#missing[@]})); then
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    if ! command -v sudo >/dev/null; then
      echo "setup: missing packages (${missing[*]}) and not root, and sudo is not installed" >&2
      exit 1
    fi
    sudo=(sudo)
  fi
  echo "setup: installing ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
fi

jobs=()
[[ -n ${MK_JOBS:-} ]] && jobs=(-j "$MK_JOBS")

# A build/ configured with another generator cannot be reused by Ninja.
if [[ -f build/CMakeCache.txt ]] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' build/CMakeCache.txt; then
  echo "setup: build/ was configured with another generator; reconfiguring from scratch"
  rm -rf build
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON --log-level=WARNING
# -k 0: build everything that can be built, so one broken file still leaves the rest testable.
ninja -C build -k 0 "${jobs[@]}"
