#!/usr/bin/env bash
# cli_errors.sh: bad code generation options are clear errors (ctest `codegen_cli_errors`).
#
#   tests/codegen/cli_errors.sh --mkdsl PATH [--stdlib DIR]
#
# Each case runs `mkdsl build` on a small valid program (tests/codegen/ops/matvec.mk) with one bad
# option and expects: exit status 1, nothing on stdout, exactly one `mkdsl: error: ...` line on
# stderr (optionally followed by the `(run `mkdsl --help` for usage)` hint) that mentions what
# was wrong, and no output file left behind (neither the -o file nor its .meta.json sidecar; a
# file that existed before is left unchanged). The `run --trace` cases at the end run `mkdsl run`
# instead (SUBCOMMAND=run). Prints `N passed, N failed`; exit 1 on a failure.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdsl="" stdlib="$root/stdlib"
while (($#)); do
  case $1 in
    --mkdsl) mkdsl=$2; shift 2 ;;
    --stdlib) stdlib=$2; shift 2 ;;
    *) echo "cli_errors: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -n $mkdsl && -x $mkdsl ]] || { echo "cli_errors: --mkdsl PATH (an executable) is required" >&2; exit 2; }
mkdsl=$(cd "$(dirname "$mkdsl")" && pwd)/$(basename "$mkdsl")  # the tests run in scratch folders

prog=$here/ops/matvec.mk
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mk_cli_errors.XXXXXX")
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
passed=0 failed=0
run_as=()  # a command prefix for expect_error (the read-only case runs as nobody under root)

# expect_error NAME PATTERN OUTFILE -- ARGS...: runs `mkdsl build ARGS` (`mkdsl $SUBCOMMAND ARGS`
# when set), expects the error above; PATTERN is an extended regex the error line must match;
# OUTFILE (may be empty) must not exist afterwards, nor OUTFILE.meta.json.
expect_error() {
  local name=$1 pattern=$2 outfile=$3
  shift 4
  local out err rc problems=() nerr nlines
  out=$("${run_as[@]}" "$mkdsl" "${SUBCOMMAND:-build}" "$@" 2>"$tmp/stderr")
  rc=$?
  err=$(cat "$tmp/stderr")
  ((rc == 1)) || problems+=("exit status $rc, expected 1")
  [[ -z $out ]] || problems+=("stdout is not empty: $(printf '%s' "$out" | head -c 200)")
  nerr=$(grep -c '^mkdsl: error: ' <<<"$err")
  nlines=$(grep -vc '^(run `mkdsl --help` for usage)$' <<<"$err")
  if [[ ${MULTILINE_OK:-0} == 1 ]]; then
    # The message may quote a tool's log on the following lines; it still starts the output.
    ((nerr == 1)) && [[ $err == "mkdsl: error: "* ]] ||
      problems+=("expected one 'mkdsl: error:' message, first on stderr")
  else
    ((nerr == 1 && nlines == 1)) || problems+=("expected exactly one 'mkdsl: error:' line on stderr")
  fi
  grep -Eq -- "$pattern" <<<"$err" || problems+=("the message does not match /$pattern/")
  if [[ -n $outfile ]]; then
    [[ -e $outfile && ! -d $outfile ]] && problems+=("output file '$outfile' was left behind")
    # The sidecar: <out>.meta.json, or the output's name with .meta.json for its extension.
    local side
    for side in "$outfile.meta.json" "${outfile%.*}.meta.json"; do
      [[ -e $side && ! -d $side ]] && problems+=("sidecar '$side' was left behind")
    done
  fi
  report "$name" "$err" "${problems[@]}"
}

# report NAME STDERR PROBLEMS...
report() {
  local name=$1 err=$2
  shift 2
  if (($# == 0)); then
    passed=$((passed + 1))
    echo "PASS $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name"
    printf '  - %s\n' "$@"
    printf '%s\n' "$err" | head -n 10 | sed 's/^/  | /'
  fi
}

common=(--stdlib "$stdlib" "$prog")

# --- unknown targets ----------------------------------------------------------------------------
expect_error "--step names no step of the program" "no step 'prefill'; its steps: .*\\[E0912\\]" "$tmp/step.txt" -- \
  "$prog" --stdlib "$stdlib" --emit=graph --step prefill -o "$tmp/step.txt"
expect_error "--step with a kernel format" "--step goes with --emit=graph, tasks or schedule" "$tmp/step.ptx" -- \
  "$prog" --stdlib "$stdlib" --step decode -o "$tmp/step.ptx"
expect_error "unknown --target sm_75" "sm_75.*(sm_90a|sm_80)|(sm_90a|sm_80).*sm_75" "$tmp/t75.ptx" -- \
  "${common[@]}" --emit=ptx --target sm_75 -o "$tmp/t75.ptx"
expect_error "unknown --target=sm_75 (= form), to stdout" "sm_75" "" -- \
  "${common[@]}" --emit=ptx --target=sm_75
expect_error "--target gfx942 with --emit=ptx (PTX is NVPTX output)" "--emit=ptx is NVPTX output.*gfx942 is AMDGPU" \
  "$tmp/gfx.ptx" -- "${common[@]}" --emit=ptx --target gfx942 -o "$tmp/gfx.ptx"
expect_error "--gpu mi300x with -o x.ptx" "-o .*mi\.ptx is NVPTX output.*gfx942 is AMDGPU" "$tmp/mi.ptx" -- \
  "${common[@]}" --gpu mi300x -o "$tmp/mi.ptx"
expect_error "--target sm_90a with -o x.hsaco" "hsaco is AMDGPU output.*sm_90a is NVPTX" "$tmp/nv.hsaco" -- \
  "${common[@]}" --target sm_90a -o "$tmp/nv.hsaco"
expect_error "--gpu h200 --target gfx942" "GPU 'h200' \(sm_90a\) cannot run gfx942 code; gfx942 code runs on mi300x" \
  "$tmp/h.hsaco" -- "${common[@]}" --gpu h200 --target gfx942 -o "$tmp/h.hsaco"
expect_error "--gpu mi250x --target gfx942 (another ISA)" "GPU 'mi250x' \(gfx90a\) cannot run gfx942 code" \
  "$tmp/isa.hsaco" -- "${common[@]}" --gpu mi250x --target gfx942 -o "$tmp/isa.hsaco"
expect_error "--gpu mi300x --target sm_90a" "GPU 'mi300x' \(gfx942\) cannot run sm_90a code" "" -- \
  "${common[@]}" --gpu mi300x --target sm_90a --emit=llvm
expect_error "--target without a value" "target" "" -- "${common[@]}" --emit=ptx --target
expect_error "--emit=bogus" "emit" "" -- "${common[@]}" --emit=bogus
expect_error "--l2-ahead past 64 tiles" "--l2-ahead needs a tile count from 0 to 64" "$tmp/l2.ptx" -- \
  "${common[@]}" --emit=ptx -o "$tmp/l2.ptx" --l2-ahead 65
expect_error "--l2-ahead that is no number" "--l2-ahead needs a tile count" "" -- "${common[@]}" --emit=ptx --l2-ahead many
expect_error "--mma-chains of 3" "--mma-chains must be 1, 2 or 4" "$tmp/chains.ptx" -- \
  "${common[@]}" --emit=ptx -o "$tmp/chains.ptx" --mma-chains 3
expect_error "--diagnostic-ablate with an unknown part" "weight-copies or weight-math" "" -- \
  "${common[@]}" --emit=ptx --diagnostic-ablate bogus
expect_error "--diagnostic-ablate with --emit=schedule" "diagnostic-ablate goes with" "" -- \
  "${common[@]}" --emit=schedule --diagnostic-ablate weight-math

# A failed build does not touch an output file that already exists.
printf 'keep me\n' >"$tmp/existing.ptx"
expect_error "unknown target leaves an existing -o file alone" "sm_75" "" -- \
  "${common[@]}" --emit=ptx --target sm_75 -o "$tmp/existing.ptx"
if [[ $(cat "$tmp/existing.ptx") == "keep me" && ! -e $tmp/existing.ptx.meta.json ]]; then
  report "  ... and the existing file is unchanged" ""
else
  report "  ... and the existing file is unchanged" "" "the existing -o file was changed or a sidecar appeared"
fi

# --- output paths -------------------------------------------------------------------------------
expect_error "-o in a folder that does not exist" "/nonexistent/dir/x\.ptx" "" -- \
  "${common[@]}" --emit=ptx -o /nonexistent/dir/x.ptx
expect_error "-o in a folder that does not exist (--emit=llvm)" "/nonexistent/dir/x\.ll" "" -- \
  "${common[@]}" --emit=llvm -o /nonexistent/dir/x.ll
mkdir -p "$tmp/adir.ptx"
expect_error "-o names a folder" "adir\.ptx" "" -- "${common[@]}" --emit=ptx -o "$tmp/adir.ptx"
# The sidecar cannot be written (a folder is in its place): no PTX left without its metadata.
mkdir -p "$tmp/side.ptx.meta.json" "$tmp/side.meta.json"
expect_error "the default .meta.json sidecar cannot be written" "side(\.ptx)?\.meta\.json" "$tmp/side.ptx" -- \
  "${common[@]}" --emit=ptx -o "$tmp/side.ptx"
mkdir -p "$tmp/meta-dir"
expect_error "--metadata names a folder" "meta-dir" "$tmp/side2.ptx" -- \
  "${common[@]}" --emit=ptx -o "$tmp/side2.ptx" --metadata "$tmp/meta-dir"
expect_error "--metadata in a folder that does not exist" "/nonexistent/dir/m\.json" "$tmp/side3.ptx" -- \
  "${common[@]}" --emit=ptx -o "$tmp/side3.ptx" --metadata /nonexistent/dir/m.json
# A file nobody can write, root included (a read-only file system).
if [[ -e /proc/version ]]; then
  expect_error "-o names an unwritable file (/proc/version)" "/proc/version" "" -- \
    "${common[@]}" --emit=ptx -o /proc/version
fi
# A read-only file. Replacing it by renaming a new file over it would succeed (that needs only the
# folder to be writable), but the user said read-only: it is an error, and the file stays as it
# was. Root may write anything, so under root this runs as `nobody` (setpriv), or is skipped.
mkdir -p "$tmp/ro" && chmod 1777 "$tmp/ro" && chmod 0755 "$tmp"
printf 'old\n' >"$tmp/ro/ro.ptx"
chmod 0444 "$tmp/ro/ro.ptx"
if ((EUID == 0)) && command -v setpriv >/dev/null; then
  chown 65534 "$tmp/ro/ro.ptx"
  run_as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
if ((EUID != 0 || ${#run_as[@]})); then
  expect_error "-o names a read-only file" "ro\.ptx" "" -- "${common[@]}" --emit=ptx -o "$tmp/ro/ro.ptx"
  if [[ $(cat "$tmp/ro/ro.ptx") == old && ! -e $tmp/ro/ro.meta.json && ! -e $tmp/ro/ro.ptx.meta.json ]]; then
    report "  ... and the read-only file is unchanged" ""
  else
    report "  ... and the read-only file is unchanged" "" "the read-only file was replaced or a sidecar appeared"
  fi
else
  echo "SKIP -o names a read-only file (running as root without setpriv: permissions are not enforced)"
fi
run_as=()

# -o names a FIFO (as /dev/stdout or a pipe does): the output goes into it; the FIFO is not
# replaced by a regular file (a temporary file renamed over the destination would do that; for
# root and -o /dev/null that replaces the device node). Runs in $tmp, never on /dev itself.
mkfifo "$tmp/fifo.ptx"
timeout 10 cat "$tmp/fifo.ptx" >"$tmp/fifo.got" 2>/dev/null &
reader=$!
timeout 60 "$mkdsl" build "${common[@]}" --emit=ptx --metadata "$tmp/fifo.meta.json" -o "$tmp/fifo.ptx" \
  >/dev/null 2>"$tmp/stderr"
rc=$?
problems=()
((rc == 0)) || problems+=("exit status $rc, expected 0")
[[ -p $tmp/fifo.ptx ]] || problems+=("the FIFO was replaced by a regular file")
wait "$reader" 2>/dev/null  # at most 10 s when nothing ever writes into the FIFO
grep -q '\.entry mk_step' "$tmp/fifo.got" || problems+=("the PTX did not come through the FIFO")
report "-o names a FIFO: written into, not replaced" "$(cat "$tmp/stderr")" "${problems[@]}"

# --- cubin --------------------------------------------------------------------------------------
expect_error "--emit=cubin without -o" "cubin.*-o|-o.*cubin|output" "" -- "${common[@]}" --emit=cubin
# ptxas that fails: a clear error, no half-written cubin.
printf '#!/bin/sh\necho "ptxas fatal: simulated failure" >&2\nexit 255\n' >"$tmp/failing-ptxas"
chmod +x "$tmp/failing-ptxas"
MKDSL_PTXAS=$tmp/failing-ptxas MULTILINE_OK=1 expect_error "--emit=cubin when ptxas fails" "ptxas" "$tmp/f.cubin" -- \
  "${common[@]}" --emit=cubin -o "$tmp/f.cubin"

# --- AMDGPU code objects -------------------------------------------------------------------------
expect_error "--emit=hsaco without -o" "hsaco needs -o" "" -- "${common[@]}" --target gfx942 --emit=hsaco
MKDSL_LLD=/nonexistent/ld.lld expect_error "--emit=hsaco without ld.lld" "needs ld\.lld: \\\$MKDSL_LLD is '/nonexistent/ld\.lld'" \
  "$tmp/none.hsaco" -- "${common[@]}" --target gfx942 -o "$tmp/none.hsaco"
printf '#!/bin/sh\necho "ld.lld: error: simulated failure" >&2\nexit 1\n' >"$tmp/failing-lld"
chmod +x "$tmp/failing-lld"
MKDSL_LLD=$tmp/failing-lld MULTILINE_OK=1 expect_error "--emit=hsaco when ld.lld fails" "ld\.lld failed" "$tmp/f.hsaco" -- \
  "${common[@]}" --target gfx90a -o "$tmp/f.hsaco"

# --- a program with errors writes nothing -------------------------------------------------------
printf 'const a = x;\n' >"$tmp/bad.mk"
out=$("$mkdsl" build --stdlib "$stdlib" "$tmp/bad.mk" --emit=ptx -o "$tmp/bad.ptx" 2>"$tmp/stderr")
rc=$?
problems=()
((rc == 1)) || problems+=("exit status $rc, expected 1")
[[ -e $tmp/bad.ptx || -e $tmp/bad.ptx.meta.json ]] && problems+=("an output file was written")
grep -q "unknown name 'x'" "$tmp/stderr" || problems+=("the diagnostic is missing")
report "a program with errors writes no output" "$(cat "$tmp/stderr")" "${problems[@]}"

# --- run --trace: a kernel traced on a GPU only ------------------------------------------------
run_common=(--stdlib "$stdlib" "$prog" --random-weights 1 --tokens 1)
SUBCOMMAND=run expect_error "run --trace with --device cpu" "--trace needs --device cuda" "$tmp/cpu.json" -- \
  "${run_common[@]}" --device cpu --trace "$tmp/cpu.json"
SUBCOMMAND=run expect_error "run --trace without a file" "--trace needs a file" "" -- \
  "${run_common[@]}" --device cuda --trace
SUBCOMMAND=run expect_error "run --trace-step without --trace" "--trace-step goes with --trace" "" -- \
  "${run_common[@]}" --device cuda --trace-step 2
SUBCOMMAND=run expect_error "run --trace-step 0" "--trace-step needs a step number" "$tmp/zero.json" -- \
  "${run_common[@]}" --device cuda --trace "$tmp/zero.json" --trace-step 0
SUBCOMMAND=run expect_error "run --device cuda with an AMDGPU target" "--device cuda runs NVPTX code.*gfx942 is AMDGPU" "" -- \
  "${run_common[@]}" --device cuda --target gfx942

echo "$passed passed, $failed failed"
((failed == 0))
