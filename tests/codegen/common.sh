# common.sh: sourced by the codegen scripts (check_targets.sh, check_amdgpu.sh,
# run_codegen_tests.sh): the programs they build, their failure lists, and the external tools,
# found as mkdsl finds them.

# The configs a file declares, in order (`config NAME {` or `config NAME : BASE {` at line start).
configs_of() { sed -nE 's/^config[[:space:]]+([A-Za-z_][A-Za-z0-9_]*).*/\1/p' "$1"; }

# The default programs, one a line: every examples/*.mk with each of its configs (FILE:CONFIG),
# then every tests/codegen/ops/*.mk (its first config).
default_programs() {
  local here root f c
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  root=$(cd "$here/../.." && pwd)
  for f in "$root"/examples/*.mk; do
    for c in $(configs_of "$f"); do echo "$f:$c"; done
  done
  for f in "$here"/ops/*.mk; do echo "$f"; done
}

# fail WHAT LINES...: counts a failure (the caller's `failed` and `failures`) and prints it with
# up to 40 lines of detail.
fail() {
  failed=$((failed + 1))
  failures+=("$1")
  echo "FAIL $1"
  shift
  printf '%s\n' "$@" | head -n 40 | sed 's/^/  | /'
}

# print_failures: the names fail() (or the caller) collected in `failures`, when there are any.
print_failures() {
  ((${#failures[@]})) || return 0
  echo
  echo "failed:"
  printf '  %s\n' "${failures[@]}"
}

# find_lld OPT: ld.lld's path on stdout, or nothing. OPT is a --lld value (`none`: as if there
# were none); empty: $MKDSL_LLD, else ld.lld-19 or ld.lld on PATH, else /usr/bin/ld.lld-19 or
# /usr/lib/llvm-19/bin/ld.lld.
find_lld() {
  local f
  if [[ -n $1 ]]; then
    [[ $1 != none ]] && echo "$1"
    return 0
  fi
  if [[ -n ${MKDSL_LLD:-} ]]; then echo "$MKDSL_LLD"; return 0; fi
  command -v ld.lld-19 || command -v ld.lld ||
    for f in /usr/bin/ld.lld-19 /usr/lib/llvm-19/bin/ld.lld; do [[ -x $f ]] && { echo "$f"; break; }; done
  return 0
}

# llvm_tool NAME: an LLVM 19 tool's path (NAME-19 on PATH, else /usr/lib/llvm-19/bin/NAME), or nothing.
llvm_tool() {
  command -v "$1-19" || { [[ -x /usr/lib/llvm-19/bin/$1 ]] && echo "/usr/lib/llvm-19/bin/$1"; }
  return 0
}
