#!/usr/bin/env bash
# check_targets.sh: every example (every config) and every stdlib op family compiles for every
# NVPTX target (ctest `codegen_targets`).
#
#   tests/codegen/check_targets.sh --mkdsl PATH [--stdlib DIR] [--targets "sm_90a sm_90 sm_80"]
#                                  [--no-big-ptxas] [--ptxas PATH|none] [FILE[:CONFIG]...]
#
# Programs: examples/*.mk with each of their configs, and tests/codegen/ops/*.mk (their first
# config); or the FILE[:CONFIG] arguments. For each program and target it runs
#   mkdsl build FILE --config C --target T --emit=ptx -o X.ptx --metadata X.meta.json
# and checks that
#   - mkdsl exits 0 and writes X.ptx and the sidecar (which names the entries);
#   - the PTX holds one `.entry` per entry the sidecar names (mk_step, the first step's, and
#     mk_step_NAME for each further step) and its `.target` is T;
#   - no `llvm.` symbol is left in the PTX (an intrinsic the NVPTX backend did not lower is
#     emitted as a call to an undefined `llvm.*` function that ptxas rejects or, worse, links);
#   - ptxas -arch=T -v accepts it; for the examples (the Llama models, every config) ptxas
#     reports 0 bytes of spill stores and spill loads for every entry.
# The Llama-3.2-1B and -8B configs are also built for an A100 (--gpu a100 --target sm_80, 163 KB
# of shared memory a block) with the smaller prefill tiles of $A100_PREFILL (examples/llama.mk):
# their defaults are the H200's. The 1B's sm_90 build takes the attention blocks of
# build_options (its defaults are sm_90a's).
# ptxas is --ptxas PATH (`none`: behave as if there were none), else $MKDSL_PTXAS, else `ptxas`
# on PATH, else /usr/local/cuda/bin/ptxas. Without it the ptxas
# checks are skipped with a message, the others still run, and the exit status is 77 (ctest
# SKIP_RETURN_CODE) when nothing else failed. ptxas on Llama-3-8B is slow: when it takes more than
# 60 s for sm_90a, the other targets of that config skip ptxas (mkdsl still compiles them).
# --no-big-ptxas skips ptxas for the Llama-3.2-1B and -8B configs altogether (for sanitizer builds:
# the PTX is the same, only mkdsl runs slower there).
#
# Prints one line per program and target, then `N passed, N failed` (one check per line).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdsl="" stdlib="$root/stdlib" targets="sm_90a sm_90 sm_80" big_ptxas=1 slow_ptxas_s=60 ptxas_opt=""
A100_PREFILL="--set prefill_rows=64 --set prefill_qkv_rows=64 --set short_rows=64"
# and per config: the 1B's gate/up tasks of 128 x 256 need 176 KB at 64 rows.
a100_prefill() { case $1 in llama_3_2_1b) echo "$A100_PREFILL --set prefill_ffn_cols=64 --set prefill_k_chunk=128" ;; *) echo "$A100_PREFILL" ;; esac; }
# The options a build of CONFIG for TARGET on GPU (empty: the target's own) takes: the A100's
# tiles there; and the 1B's 64-key attention blocks spill on sm_90 (its products on mma.sync): 32.
build_options() {
  if [[ -n $3 ]]; then echo "--gpu $3 $(a100_prefill "$1")"
  elif [[ $1 == llama_3_2_1b && $2 == sm_90 ]]; then echo "--set prefill_keys=32"
  fi
}
programs=()
while (($#)); do
  case $1 in
    --mkdsl) mkdsl=$2; shift 2 ;;
    --stdlib) stdlib=$2; shift 2 ;;
    --targets) targets=$2; shift 2 ;;
    --no-big-ptxas) big_ptxas=0; shift ;;
    --ptxas) ptxas_opt=$2; shift 2 ;;
    -*) echo "check_targets: unknown option '$1'" >&2; exit 2 ;;
    *) programs+=("$1"); shift ;;
  esac
done
[[ -n $mkdsl && -x $mkdsl ]] || { echo "check_targets: --mkdsl PATH (an executable) is required" >&2; exit 2; }
mkdsl=$(cd "$(dirname "$mkdsl")" && pwd)/$(basename "$mkdsl")  # the tests run in scratch folders

if [[ -n $ptxas_opt ]]; then
  ptxas=$ptxas_opt
  [[ $ptxas == none ]] && ptxas=""
else
  ptxas=${MKDSL_PTXAS:-}
  [[ -z $ptxas ]] && ptxas=$(command -v ptxas || true)
  [[ -z $ptxas && -x /usr/local/cuda/bin/ptxas ]] && ptxas=/usr/local/cuda/bin/ptxas
fi
if [[ -n $ptxas && ! -x $ptxas ]]; then
  echo "check_targets: MKDSL_PTXAS=$ptxas is not an executable" >&2
  exit 1
fi
if [[ -z $ptxas ]]; then
  echo "SKIP (ptxas part): no ptxas found (set MKDSL_PTXAS, put ptxas on PATH, or install the CUDA"
  echo "     toolkit in /usr/local/cuda); checking mkdsl's output without assembling it"
else
  echo "ptxas: $ptxas ($("$ptxas" --version 2>/dev/null | tail -n1))"
fi

source "$here/common.sh"
((${#programs[@]})) || mapfile -t programs < <(default_programs)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mk_targets.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0 ptxas_skipped=0
failures=()

for prog in "${programs[@]}"; do
  file=${prog%%:*} config=""
  [[ $prog == *:* ]] && config=${prog#*:}
  [[ -f $file ]] && file=$(cd "$(dirname "$file")" && pwd)/$(basename "$file")
  rel=${file#"$root"/}
  label=$rel${config:+ --config $config}
  # The examples (all Llama models, every config): ptxas must not spill. The 1B and 8B configs
  # are the big ones (--no-big-ptxas).
  llama=0 big=0
  [[ $file == "$root"/examples/* ]] && llama=1
  [[ $config == llama_3_2_1b || $config == llama_3_8b ]] && big=1
  ptxas_here=1
  ((big && !big_ptxas)) && ptxas_here=0
  builds=$targets  # TARGET or TARGET@GPU
  ((big)) && [[ " $targets " == *" sm_80 "* ]] && builds+=" sm_80@a100"
  for build in $builds; do
    t=${build%@*} gpu=""
    [[ $build == *@* ]] && gpu=${build#*@}
    opts=$(build_options "$config" "$t" "$gpu")
    what="$label --target $t${opts:+ $opts}"
    out=$tmp/k.ptx
    meta=$tmp/k.meta.json
    rm -f "$out" "$meta"
    args=(build --stdlib "$stdlib" "$file" --emit=ptx --target "$t" -o "$out" --metadata "$meta")
    [[ -n $config ]] && args+=(--config "$config")
    args+=($opts)
    start=$(date +%s.%N)
    "$mkdsl" "${args[@]}" >"$tmp/mk.log" 2>&1
    rc=$?
    mk_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    if ((rc != 0)); then
      fail "$what: mkdsl exited $rc" "$(cat "$tmp/mk.log")"
      continue
    fi
    problems=()
    [[ -s $out ]] || problems+=("no PTX written")
    [[ -s $meta ]] || problems+=("no metadata sidecar (--metadata $meta)")
    [[ -s $meta ]] && ! grep -q '"entry": "mk_step"' "$meta" && problems+=("the sidecar does not name the entry mk_step")
    named=$(grep -c '"entry": "mk_step' "$meta" 2>/dev/null)
    if [[ -s $out ]]; then
      entries=$(grep -cE '^[[:space:]]*(\.visible[[:space:]]+|\.weak[[:space:]]+)?\.entry[[:space:]]' "$out")
      ((entries == named)) || problems+=("$entries .entry directives, expected the sidecar's $named")
      grep -qE '^[[:space:]]*(\.visible[[:space:]]+)?\.entry[[:space:]]+mk_step\(' "$out" ||
        problems+=("no .entry mk_step")
      grep -qE "^[[:space:]]*\.target[[:space:]]+$t([[:space:],]|\$)" "$out" || problems+=(".target is not $t")
      if grep -nE '(^|[^A-Za-z0-9_$])llvm\.[A-Za-z0-9_.]' "$out" >"$tmp/llvm.txt"; then
        problems+=("unresolved llvm.* symbols in the PTX:" "$(head -n 5 "$tmp/llvm.txt")")
      fi
    fi
    if ((${#problems[@]})); then
      fail "$what" "${problems[@]}"
      continue
    fi
    detail="mkdsl ${mk_s}s, $(wc -c <"$out") bytes"
    if [[ -z $ptxas ]]; then
      ptxas_skipped=$((ptxas_skipped + 1))
      detail+=", ptxas skipped (not found)"
    elif ((!ptxas_here)); then
      ptxas_skipped=$((ptxas_skipped + 1))
      detail+=", ptxas skipped"
    else
      start=$(date +%s.%N)
      "$ptxas" -arch="$t" -v "$out" -o "$tmp/k.cubin" >"$tmp/ptxas.log" 2>&1
      rc=$?
      px_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
      if ((rc != 0)); then
        fail "$what: ptxas -arch=$t rejects the PTX (exit $rc)" "$(grep -v '^ptxas info' "$tmp/ptxas.log" | head -n 20)"
        continue
      fi
      # Per entry: "Compiling entry function 'mk_step' for 'sm_90a'", then "0 bytes stack frame,
      # 0 bytes spill stores, 0 bytes spill loads" and "Used 168 registers, ...".
      # ENTRY:REGISTERS:STORES:LOADS per line.
      awk '/Compiling entry function/ { match($0, /'"'"'[^'"'"']*'"'"'/); e = substr($0, RSTART + 1, RLENGTH - 2) }
           /bytes spill stores/ && e != "" { for (i = 1; i <= NF; ++i) { if ($(i+1) == "bytes" && $(i+2) == "spill" && $(i+3) == "stores,") s = $i; if ($(i+1) == "bytes" && $(i+2) == "spill" && $(i+3) == "loads") l = $i } }
           /Used [0-9]+ registers/ && e != "" { match($0, /Used [0-9]+/); r = substr($0, RSTART + 5, RLENGTH - 5); print e ":" r ":" s ":" l; e = "" }' \
        "$tmp/ptxas.log" >"$tmp/entries.txt"
      per_entry=$(awk -F: '{ printf "%s%s %s regs, spills %s %s", (NR > 1 ? "; " : ""), $1, $2, $3, $4 }' "$tmp/entries.txt")
      detail+=", ptxas ${px_s}s, ${per_entry:-no entry report}"
      if ((llama)); then
        if [[ ! -s $tmp/entries.txt ]]; then
          fail "$what: ptxas -v printed no spill line" "$(cat "$tmp/ptxas.log")"
          continue
        fi
        spilling=$(awk -F: '$3 != "0" || $4 != "0" { print $1 " (stores loads: " $3 " " $4 ")" }' "$tmp/entries.txt")
        if [[ -n $spilling ]]; then
          fail "$what: ptxas reports spills, expected none: $spilling" "$(cat "$tmp/ptxas.log")"
          continue
        fi
        # ptxas on the 8B kernel is slow: one target is enough when it is.
        if [[ $config == llama_3_8b && $t == sm_90a ]] &&
           awk -v s="$px_s" -v l="$slow_ptxas_s" 'BEGIN { exit !(s > l) }'; then
          echo "note: ptxas took ${px_s}s (> ${slow_ptxas_s}s) on $label; the other targets skip ptxas"
          ptxas_here=0
        fi
      fi
    fi
    passed=$((passed + 1))
    echo "ok   $what ($detail)"
  done
done

print_failures
((ptxas_skipped)) && echo "$ptxas_skipped ptxas runs skipped"
echo "$passed passed, $failed failed"
((failed == 0)) || exit 1
[[ -z $ptxas ]] && exit 77
exit 0
