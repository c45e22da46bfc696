#!/usr/bin/env bash
# Runs the whole test suite:
#   1. scripts/setup.sh (packages + build/), then ctest in build/
#   2. sanitizer pass: build-asan/ with clang-19, -DMK_SANITIZE=ON (ASan + UBSan), ctest again
#   3. fuzz pass: build-fuzz/ with clang-19, -DMK_FUZZ=ON, the libFuzzer targets
#      mk_fuzz_parse_check for MK_FUZZ_SECONDS seconds on a seed corpus of every .mk in the repo,
#      and mk_fuzz_schedule (schedule parser + verifier) on the schedules in tests/ir, and
#      mk_fuzz_lsp (the language server) on the LSP transcripts in tests/lsp
# The last line is `N passed, N failed` (each ctest test counts once, the fuzz run counts once);
# the exit status is non-zero when anything failed.
#
# Environment:
#   MK_FUZZ_SECONDS=N      fuzzing time of parse+check (default 120; 0 skips the fuzz pass)
#   MK_SCHEDULE_FUZZ_SECONDS=N  fuzzing time of the schedule parser and verifier (default 30)
#   MK_LSP_FUZZ_SECONDS=N  fuzzing time of the language server (default 30)
#   MK_SKIP_SANITIZERS=1   skip the sanitizer and fuzz passes (quick local runs)
#   MK_JOBS=N              parallel build jobs (default: ninja's own choice)
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

FUZZ_SECONDS=${MK_FUZZ_SECONDS:-120}
SCHEDULE_FUZZ_SECONDS=${MK_SCHEDULE_FUZZ_SECONDS:-30}
LSP_FUZZ_SECONDS=${MK_LSP_FUZZ_SECONDS:-30}
SKIP_SANITIZERS=${MK_SKIP_SANITIZERS:-0}
CLANG_CC=clang-19
CLANG_CXX=clang++-19
jobs=()
[[ -n ${MK_JOBS:-} ]] && jobs=(-j "$MK_JOBS")

passed=0
failed=0
steps=()  # one summary line per step
t0=$SECONDS

banner() { printf '\n==== %s\n' "$*"; }
finish() {
  banner "summary ($((SECONDS - t0))s)"
  printf '  %s\n' "${steps[@]}"
  echo "$passed passed, $failed failed"
  ((failed == 0))
  exit
}

# Runs ctest in $2 and adds its counts; $1 names the step.
run_ctest() {
  local name=$1 dir=$2 log start=$SECONDS rc p f total
  log=$(mktemp)
  ctest --test-dir "$dir" --output-on-failure -j2 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  # "100% tests passed, 0 tests failed out of 7"
  if read -r f total < <(sed -nE 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1 \2/p' "$log" | tail -n1) &&
     [[ -n $total ]]; then
    p=$((total - f))
  else
    p=0 f=1  # ctest itself failed, or found no tests (a configuration error)
    echo "ctest in $dir did not report any results"
  fi
  if ((rc != 0 && f == 0)); then f=1; fi
  rm -f "$log"
  passed=$((passed + p))
  failed=$((failed + f))
  steps+=("$name: $p passed, $f failed ($((SECONDS - start))s)")
}

# A step that could not run at all counts as one failure.
step_failed() {
  failed=$((failed + 1))
  steps+=("$1: FAILED ($2)")
}

# Configures and builds a clang-19 build tree: $1 dir, $2 target (empty: all), rest cmake options.
clang_build() {
  local dir=$1 target=$2
  shift 2
  if [[ -f $dir/CMakeCache.txt ]] && ! grep -q "^CMAKE_CXX_COMPILER:FILEPATH=.*$CLANG_CXX\$" "$dir/CMakeCache.txt"; then
    rm -rf "$dir"
  fi
  CC=$CLANG_CC CXX=$CLANG_CXX cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DBUILD_TESTING=ON --log-level=WARNING "$@" && ninja -C "$dir" -k 0 "${jobs[@]}" $target
}

# LeakSanitizer cannot run where ptrace is forbidden (some containers); then leaks go unchecked.
probe_leak_sanitizer() {
  local tmp out
  tmp=$(mktemp -d)
  echo 'int main() { return 0; }' >"$tmp/p.cpp"
  DETECT_LEAKS=1
  if $CLANG_CXX -fsanitize=address "$tmp/p.cpp" -o "$tmp/p" 2>/dev/null; then
    if ! out=$(ASAN_OPTIONS=detect_leaks=1 "$tmp/p" 2>&1) || [[ $out == *LeakSanitizer* ]]; then
      DETECT_LEAKS=0
      echo "note: LeakSanitizer does not work here (ptrace restricted?); leak checking is off"
    fi
  fi
  rm -rf "$tmp"
}

# ---- 1. build/ and its tests -------------------------------------------------------------------
banner "set-up and build (scripts/setup.sh)"
start=$SECONDS
if bash scripts/setup.sh; then
  steps+=("set-up/build: ok ($((SECONDS - start))s)")
else
  step_failed "set-up/build" "scripts/setup.sh failed"
  # A build with some broken targets still runs the tests it has (unbuilt ones fail in ctest).
  [[ -f build/CTestTestfile.cmake && -x build/tools/mkdsl/mkdsl ]] || finish
fi

banner "tests (build/)"
run_ctest "tests" build

# ---- 2. sanitizers -----------------------------------------------------------------------------
if [[ $SKIP_SANITIZERS == 1 ]]; then
  steps+=("sanitizers and fuzzing: skipped (MK_SKIP_SANITIZERS=1)")
  finish
fi

probe_leak_sanitizer
export ASAN_OPTIONS="detect_leaks=$DETECT_LEAKS:detect_stack_use_after_return=1:strict_init_order=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

banner "sanitizer build (build-asan/, ASan+UBSan, $CLANG_CXX)"
start=$SECONDS
if clang_build build-asan "" -DMK_SANITIZE=ON; then
  steps+=("sanitizer build: ok ($((SECONDS - start))s)")
else
  step_failed "sanitizer build" "build-asan did not fully build"
fi
if [[ -f build-asan/CTestTestfile.cmake && -x build-asan/tools/mkdsl/mkdsl ]]; then
  banner "tests under ASan+UBSan (build-asan/)"
  run_ctest "tests (ASan+UBSan)" build-asan
fi

# ---- 3. fuzzing --------------------------------------------------------------------------------
if ((FUZZ_SECONDS <= 0)); then
  steps+=("fuzz: skipped (MK_FUZZ_SECONDS=$FUZZ_SECONDS)")
  finish
fi

banner "fuzz build (build-fuzz/, libFuzzer+ASan+UBSan)"
start=$SECONDS
if ! clang_build build-fuzz "mk_fuzz_parse_check mk_fuzz_schedule mk_fuzz_lsp" -DMK_FUZZ=ON -DBUILD_TESTING=OFF; then
  step_failed "fuzz" "build-fuzz did not build"
  finish
fi
steps+=("fuzz build: ok ($((SECONDS - start))s)")
mkdir -p build-fuzz/artifacts

# Runs one fuzz target: $1 target, $2 seconds, $3 dictionary, then the seed files.
run_fuzzer() {
  local target=$1 seconds=$2 dict=$3 corpus log rc start=$SECONDS
  shift 3
  banner "fuzz $target for ${seconds}s"
  corpus=$(mktemp -d)
  for f in "$@"; do
    [[ -f $f ]] && cp "$f" "$corpus/${f//\//_}"
  done
  log=build-fuzz/$target.log
  echo "seed corpus: $(find "$corpus" -type f | wc -l) files; log: $log"
  build-fuzz/fuzz/$target -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -dict="$dict" -detect_leaks="$DETECT_LEAKS" -print_final_stats=1 \
    -artifact_prefix=build-fuzz/artifacts/ "$corpus" >"$log" 2>&1 </dev/null
  rc=$?
  rm -rf "$corpus"
  if ((rc == 0)) && ! grep -qE 'ERROR: (AddressSanitizer|UndefinedBehaviorSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$log"; then
    grep -E '^stat::(number_of_executed_units|peak_rss_mb)|^Done ' "$log" | sed 's/^/  /'
    passed=$((passed + 1))
    steps+=("fuzz $target: ok, no crashes in ${seconds}s ($((SECONDS - start))s)")
  else
    tail -n 60 "$log"
    echo "fuzz: FAILED (exit $rc); reproducer under build-fuzz/artifacts/; rerun one with:"
    echo "  build-fuzz/fuzz/$target build-fuzz/artifacts/<crash-file>"
    failed=$((failed + 1))
    steps+=("fuzz $target: FAILED (exit $rc, see $log)")
  fi
}

run_fuzzer mk_fuzz_parse_check "$FUZZ_SECONDS" fuzz/mk.dict examples/*.mk stdlib/*.mk tests/diagnostics/*.mk
run_fuzzer mk_fuzz_schedule "$SCHEDULE_FUZZ_SECONDS" fuzz/schedule.dict tests/ir/*.sched
run_fuzzer mk_fuzz_lsp "$LSP_FUZZ_SECONDS" fuzz/lsp.dict tests/lsp/*.transcript
finish
