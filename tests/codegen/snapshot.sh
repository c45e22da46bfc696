#!/usr/bin/env bash
# snapshot.sh: every output the compiler gives for the examples and the codegen programs, one file
# each, into a folder, so that a change meant to keep the output as it is (a restructuring) can be
# compared byte for byte with `diff -r BEFORE AFTER`.
#
#   tests/codegen/snapshot.sh --mkdsl PATH --out DIR [--stdlib DIR] [FILE[:CONFIG]...]
#
# Programs: examples/*.mk with each config and tests/codegen/ops/*.mk (common.sh's
# default_programs), plus tests/codegen/*.mk (their first config); or the arguments. For each:
#   PTX and the metadata sidecar for sm_90a, sm_90 and sm_80; AMDGCN and its sidecar for gfx942 and
#   gfx90a; LLVM IR for sm_90a and gfx942; the graph, tasks and schedule (text and JSON).
# A build that fails records its diagnostics (stderr) and exit status instead, so failures compare
# too. Exit status: 0 when every command ran (whatever it answered), 2 on bad usage.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$here/common.sh"
mkdsl="" out="" stdlib="$root/stdlib"
programs=()
while (($#)); do
  case $1 in
    --mkdsl) mkdsl=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --stdlib) stdlib=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "${BASH_SOURCE[0]}"; exit 0 ;;
    -*) echo "snapshot: unknown option '$1'" >&2; exit 2 ;;
    *) programs+=("$1"); shift ;;
  esac
done
[[ -n $mkdsl && -x $mkdsl && -n $out ]] || { echo "snapshot: --mkdsl PATH and --out DIR are required" >&2; exit 2; }
if ((${#programs[@]} == 0)); then
  mapfile -t programs < <(default_programs; for f in "$here"/*.mk; do echo "$f"; done)
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
# Programs are named relative to the repository (outputs quote their path), so that snapshots of
# two checkouts compare.
cd "$root"

# run NAME ARGS...: mkdsl's stdout into NAME, its stderr and status into NAME.err when it fails.
run() {
  local name=$1
  shift
  local status=0
  "$mkdsl" "$@" --stdlib "$stdlib" >"$out/$name" 2>"$out/$name.err" || status=$?
  if ((status)); then
    echo "exit $status" >>"$out/$name.err"
  elif [[ ! -s $out/$name.err ]]; then
    rm -f "$out/$name.err"
  fi
}

for prog in "${programs[@]}"; do
  file=${prog%%:*} config=""
  [[ $prog == *:* ]] && config=${prog#*:}
  rel=${file#"$root"/}
  file=$rel
  stem=${rel//\//_}
  stem=${stem%.mk}${config:+.$config}
  args=(build "$file")
  [[ -n $config ]] && args+=(--config "$config")
  for t in sm_90a sm_90 sm_80; do
    run "$stem.$t.ptx" "${args[@]}" --target "$t" --emit=ptx -o /dev/stdout --metadata "$out/$stem.$t.ptx.meta.json"
  done
  for t in gfx942 gfx90a; do
    run "$stem.$t.s" "${args[@]}" --target "$t" --emit=amdgcn -o /dev/stdout --metadata "$out/$stem.$t.s.meta.json"
  done
  run "$stem.sm_90a.ll" "${args[@]}" --target sm_90a --emit=llvm
  run "$stem.gfx942.ll" "${args[@]}" --target gfx942 --emit=llvm
  run "$stem.graph" "${args[@]}" --emit=graph
  run "$stem.tasks" "${args[@]}" --emit=tasks
  run "$stem.schedule" "${args[@]}" --emit=schedule
  run "$stem.schedule.json" "${args[@]}" --emit=schedule --format=json
done
echo "snapshot: $(find "$out" -type f | wc -l) files in $out"
