#!/usr/bin/env bash
# run_codegen_tests.sh: the FileCheck-style code generation tests (ctest `codegen_filecheck`).
#
#   tests/codegen/run_codegen_tests.sh --mkdsl PATH --filecheck PATH --stdlib DIR [--ptxas PATH|none]
#                                      [--lld PATH|none] [FILE...]
#
# Without FILEs it runs every tests/codegen/*.mk (the folder of this script). Each test file is a
# .mk program whose comment lines hold its commands and expectations, as in LLVM's lit:
#
#   // RUN: %mkdsl build %s --emit=ptx --target sm_90a --stdlib %stdlib | %FileCheck %s --check-prefix=PTX
#   // PTX: ld.acquire.gpu.global.u32
#   // REQUIRES: ptxas
#
# Every `// RUN:` line (a trailing `\` continues it on the next `// RUN:` line) runs with
# `bash -o pipefail -c`, in a scratch folder of its file, after these substitutions:
#   %mkdsl      the mkdsl binary           %FileCheck  LLVM's FileCheck
#   %s          the test file              %stdlib     the stdlib folder
#   %ptxas      ptxas (see below)          %t          a scratch path unique to the file
#   %S          the test file's folder     %root       the repository (parent of this folder)
#   %readelf    llvm-readelf (LLVM 19)
# A RUN line passes when it exits 0; a negative check is spelled with bash's `!` or `not`
# (`! %mkdsl ... 2>&1 | %FileCheck ...` needs pipefail to see mkdsl's status, which is why it is on).
# A file with `// REQUIRES: ptxas` is skipped (and counted as skipped) when no ptxas is found:
# --ptxas PATH (`none`: behave as if there were none), else $MKDSL_PTXAS, else `ptxas` on PATH,
# else /usr/local/cuda/bin/ptxas; the RUN lines see it as $MKDSL_PTXAS too (mkdsl's own lookup).
# Likewise `// REQUIRES: lld` (AMDGPU code objects): ld.lld is --lld PATH (`none`: absent), else
# $MKDSL_LLD, else ld.lld-19 or ld.lld on PATH, else /usr/bin/ld.lld-19 or
# /usr/lib/llvm-19/bin/ld.lld, seen as $MKDSL_LLD; it also needs llvm-readelf for %readelf.
# A file without RUN lines fails (a test that runs nothing cannot fail).
#
# Prints each failing RUN line with its output, then `N passed, N failed` (counting RUN lines;
# skipped ones are reported apart). Exit status: 0 when nothing failed, 1 otherwise, 77 when
# FileCheck itself is missing (ctest SKIP_RETURN_CODE).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdsl="" filecheck="" stdlib="$root/stdlib" verbose=0 ptxas_opt="" lld_opt=""
files=()
while (($#)); do
  case $1 in
    --mkdsl) mkdsl=$2; shift 2 ;;
    --filecheck) filecheck=$2; shift 2 ;;
    --stdlib) stdlib=$2; shift 2 ;;
    --ptxas) ptxas_opt=$2; shift 2 ;;
    --lld) lld_opt=$2; shift 2 ;;
    -v|--verbose) verbose=1; shift ;;
    -h|--help) sed -n '2,34p' "${BASH_SOURCE[0]}"; exit 0 ;;
    -*) echo "run_codegen_tests: unknown option '$1'" >&2; exit 2 ;;
    *) files+=("$1"); shift ;;
  esac
done
[[ -n $mkdsl && -x $mkdsl ]] || { echo "run_codegen_tests: --mkdsl PATH (an executable) is required" >&2; exit 2; }
mkdsl=$(cd "$(dirname "$mkdsl")" && pwd)/$(basename "$mkdsl")  # the tests run in scratch folders
if [[ -z $filecheck ]]; then
  filecheck=$(command -v FileCheck || command -v FileCheck-19 || echo /usr/lib/llvm-19/bin/FileCheck)
fi
if [[ ! -x $filecheck ]]; then
  echo "SKIP: LLVM's FileCheck not found (install llvm-19-tools, or pass --filecheck PATH)"
  exit 77
fi
if [[ -n $ptxas_opt ]]; then
  ptxas=$ptxas_opt
  [[ $ptxas == none ]] && ptxas=""
else
  ptxas=${MKDSL_PTXAS:-}
  [[ -z $ptxas ]] && ptxas=$(command -v ptxas || true)
  [[ -z $ptxas && -x /usr/local/cuda/bin/ptxas ]] && ptxas=/usr/local/cuda/bin/ptxas
fi
# The compiler's --emit=cubin looks for ptxas the same way; keep the two in agreement.
[[ -n $ptxas ]] && export MKDSL_PTXAS=$ptxas
source "$here/common.sh"
lld=$(find_lld "$lld_opt")
[[ -n $lld ]] && export MKDSL_LLD=$lld
readelf=$(llvm_tool llvm-readelf)

if ((${#files[@]} == 0)); then
  shopt -s nullglob
  files=("$here"/*.mk)
  shopt -u nullglob
fi
if ((${#files[@]} == 0)); then
  echo "run_codegen_tests: no test files in $here" >&2
  exit 1
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/mk_codegen.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# `not CMD...`: succeeds when CMD fails (exit 1 or more, but not a crash), like LLVM's `not`.
not_fn='not() { "$@"; local rc=$?; ((rc >= 1 && rc < 128)); }'

passed=0 failed=0 skipped=0
failures=()
for file in "${files[@]}"; do
  file=$(cd "$(dirname "$file")" && pwd)/$(basename "$file")
  name=${file#"$root"/}
  if [[ ! -f $file ]]; then
    echo "FAIL $name: no such file"; failed=$((failed + 1)); failures+=("$name"); continue
  fi
  # Collect RUN lines (with continuations) and their line numbers.
  runs=() lines=() cur="" curline=0 n=0 requires_ptxas=0 requires_lld=0
  while IFS= read -r line || [[ -n $line ]]; do
    n=$((n + 1))
    if [[ $line =~ ^[[:space:]]*//[[:space:]]*REQUIRES:[[:space:]]*ptxas ]]; then
      requires_ptxas=1
    fi
    if [[ $line =~ ^[[:space:]]*//[[:space:]]*REQUIRES:[[:space:]]*lld ]]; then
      requires_lld=1
    fi
    if [[ $line =~ ^[[:space:]]*//[[:space:]]*RUN:[[:space:]]?(.*)$ ]]; then
      text=${BASH_REMATCH[1]}
      [[ -z $cur ]] && curline=$n
      if [[ $text =~ ^(.*)\\[[:space:]]*$ ]]; then
        cur+="${BASH_REMATCH[1]} "
        continue
      fi
      cur+=$text
      runs+=("$cur"); lines+=("$curline"); cur=""
    fi
  done <"$file"
  [[ -n $cur ]] && { runs+=("$cur"); lines+=("$curline"); }
  if ((${#runs[@]} == 0)); then
    echo "FAIL $name: no // RUN: lines"; failed=$((failed + 1)); failures+=("$name"); continue
  fi
  if ((requires_ptxas)) && [[ -z $ptxas ]]; then
    echo "SKIP $name: requires ptxas (set MKDSL_PTXAS or put ptxas on PATH)"
    skipped=$((skipped + ${#runs[@]}))
    continue
  fi
  if ((requires_lld)) && [[ -z $lld || -z $readelf ]]; then
    echo "SKIP $name: requires ld.lld and llvm-readelf (install lld-19 and llvm-19, or set MKDSL_LLD)"
    skipped=$((skipped + ${#runs[@]}))
    continue
  fi
  base=$(basename "$file" .mk)
  dir=$scratch/$base
  mkdir -p "$dir"
  for i in "${!runs[@]}"; do
    cmd=${runs[$i]}
    # Longest names first: %stdlib before %s, %FileCheck before %f..., %root before %r.
    cmd=${cmd//%stdlib/$stdlib}
    cmd=${cmd//%mkdsl/$mkdsl}
    cmd=${cmd//%FileCheck/$filecheck}
    cmd=${cmd//%ptxas/${ptxas:-ptxas-not-found}}
    cmd=${cmd//%readelf/${readelf:-llvm-readelf-not-found}}
    cmd=${cmd//%root/$root}
    cmd=${cmd//%S/$(dirname "$file")}
    cmd=${cmd//%s/$file}
    cmd=${cmd//%t/$dir/$base.tmp}
    out=$(cd "$dir" && bash -o pipefail -c "$not_fn; $cmd" 2>&1)
    rc=$?
    if ((rc == 0)); then
      passed=$((passed + 1))
      ((verbose)) && echo "PASS $name:${lines[$i]}"
    else
      failed=$((failed + 1))
      failures+=("$name:${lines[$i]}")
      echo "FAIL $name:${lines[$i]} (exit $rc)"
      echo "  \$ $cmd"
      printf '%s\n' "$out" | head -n 60 | sed 's/^/  | /'
    fi
  done
done

print_failures
((skipped)) && echo "$skipped skipped (a tool they require is missing)"
echo "$passed passed, $failed failed"
((failed == 0))
