#!/usr/bin/env bash
# check_amdgpu.sh: every example (every config) and every stdlib op family compiles to an AMDGPU
# code object for gfx942 (MI300X) and gfx90a (MI250X), within the hardware's limits (ctest
# `codegen_amdgpu`). There is no AMD GPU here: validity is what LLVM's own tools say.
#
#   tests/codegen/check_amdgpu.sh --mkdsl PATH [--stdlib DIR] [--targets "gfx942 gfx90a"]
#                                 [--lld PATH|none] [FILE[:CONFIG]...]
#
# Programs: examples/*.mk with each of their configs, and tests/codegen/ops/*.mk (their first
# config); or the FILE[:CONFIG] arguments. For each program and target it runs
#   mkdsl build FILE --config C --target T -o X.hsaco --metadata X.meta.json
# (with the smaller prefill tiles of $AMD_PREFILL for the Llama-3.2-1B and -8B configs, whose
# prefill tuning is the H200's and needs more than 64 KiB of LDS)
#   mkdsl build FILE --config C --target T --emit=amdgcn -o X.s
# and checks that
#   - mkdsl exits 0 and writes the code object and the sidecar (arch T, entry mk_step);
#   - llvm-readelf --file-headers: an AMDGPU (EM_AMDGPU) shared object for T;
#   - llvm-readelf --notes (the code object metadata): one kernel per entry the sidecar names
#     (mk_step, then mk_step_NAME per further step), for amdgcn-amd-amdhsa--T; each kernel: wave64;
#     a maximum workgroup of its entry's block in the sidecar; no scratch
#     (.private_segment_fixed_size 0) and no VGPR or SGPR spills (but in the prefill entries of
#     the Llama-3.2-1B and -8B configs: printed, not gated); VGPRs + AGPRs within what the
#     block's waves may each have (512 per SIMD lane, the block's waves spread over 4 SIMDs), at
#     most 256 VGPRs, at most 108 SGPRs (102 addressable plus VCC, FLAT_SCRATCH and XNACK_MASK);
#     static LDS plus its entry's dynamic_smem_bytes within the 64 KiB of a workgroup;
#   - llvm-objdump disassembles the code object for T with no unknown instruction;
#   - llvm-mc assembles the --emit=amdgcn output for T (the assembly is valid as printed).
# ld.lld is --lld PATH (`none`: behave as if there were none), else $MKDSL_LLD, else ld.lld-19 or
# ld.lld on PATH, else /usr/bin/ld.lld-19 or /usr/lib/llvm-19/bin/ld.lld; llvm-readelf,
# llvm-objdump and llvm-mc come from LLVM 19. Without one of them the script says which and exits
# 77 (ctest SKIP_RETURN_CODE) before building anything.
#
# Prints one line per program and target (VGPRs, SGPRs, LDS), then `N passed, N failed`.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdsl="" stdlib="$root/stdlib" targets="gfx942 gfx90a" lld_opt=""
# The prefill tiles of the 1B and 8B configs on a workgroup of 64 KiB of LDS (examples/llama.mk), in
# chunks of 128 tokens (and short ones of 64): a 512-token chunk makes an 8B code object of 67 MB (4x) and 90 s (3.5x) to build.
AMD_PREFILL="--set chunk=128 --set prefill_rows=32 --set prefill_qkv_rows=32 --set prefill_k_chunk=32 --set prefill_cols=16 --set prefill_queries=16 --set prefill_keys=64 --set prefill_norm_rows=1 --set short_chunk=64 --set short_rows=32 --set short_k_chunk=32 --set short_queries=16"
programs=()
while (($#)); do
  case $1 in
    --mkdsl) mkdsl=$2; shift 2 ;;
    --stdlib) stdlib=$2; shift 2 ;;
    --targets) targets=$2; shift 2 ;;
    --lld) lld_opt=$2; shift 2 ;;
    -*) echo "check_amdgpu: unknown option '$1'" >&2; exit 2 ;;
    *) programs+=("$1"); shift ;;
  esac
done
[[ -n $mkdsl && -x $mkdsl ]] || { echo "check_amdgpu: --mkdsl PATH (an executable) is required" >&2; exit 2; }
mkdsl=$(cd "$(dirname "$mkdsl")" && pwd)/$(basename "$mkdsl")
source "$here/common.sh"

lld=$(find_lld "$lld_opt")
readelf=$(llvm_tool llvm-readelf) objdump=$(llvm_tool llvm-objdump) mc=$(llvm_tool llvm-mc)
missing=()
[[ -n $lld && -x $lld ]] || missing+=("ld.lld (install lld-19, or set MKDSL_LLD)")
[[ -n $readelf ]] || missing+=("llvm-readelf-19")
[[ -n $objdump ]] || missing+=("llvm-objdump-19")
[[ -n $mc ]] || missing+=("llvm-mc-19")
if ((${#missing[@]})); then
  echo "SKIP: the AMDGPU code object checks need: ${missing[*]}"
  exit 77
fi
export MKDSL_LLD=$lld
echo "ld.lld: $lld ($("$lld" --version 2>/dev/null | head -n1))"

((${#programs[@]})) || mapfile -t programs < <(default_programs)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mk_amdgpu.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
failures=()

# The value of the kernel-level metadata key KEY in notes file $1: `    .KEY: value`, or
# `  - .KEY: value` for the kernel's first key.
note() { sed -nE "s/^(  - |    )\\.$2:[[:space:]]+//p" "$1" | head -n 1; }
# A number field of entry $3's launch in the sidecar JSON $1: the first "$2" after its "entry".
meta_num() {
  awk -v key="\"$2\":" -v entry="\"entry\": \"$3\"" '
    index($0, entry) { found = 1; next }
    found && $1 == key { v = $2; sub(/,$/, "", v); print v; exit }' "$1"
}
# Kernel $2's part of the notes $1: the lines of its item in amdhsa.kernels.
kernel_notes() {
  awk -v name="$2" 'BEGIN { n = 0 } /^  - / { flush(); n = 0 } /^amdhsa\./ { flush(); n = 0; inside = 0 }
    { buf[n++] = $0 } /^(  - |    )\.name:/ && $NF == name { hit = 1 }
    function flush() { if (hit) for (i = 0; i < n; ++i) print buf[i]; hit = 0 }
    END { flush() }' "$1"
}

for prog in "${programs[@]}"; do
  file=${prog%%:*} config=""
  [[ $prog == *:* ]] && config=${prog#*:}
  [[ -f $file ]] && file=$(cd "$(dirname "$file")" && pwd)/$(basename "$file")
  rel=${file#"$root"/}
  label=$rel${config:+ --config $config}
  for t in $targets; do
    what="$label --target $t"
    co=$tmp/k.hsaco meta=$tmp/k.meta.json asm=$tmp/k.s
    rm -f "$co" "$meta" "$asm"
    args=(build --stdlib "$stdlib" "$file" --target "$t")
    [[ -n $config ]] && args+=(--config "$config")
    # The 1B and 8B prefill tuning is the H200's: its tiles need more than a workgroup's 64 KiB of
    # LDS, so an AMDGPU build takes tiles that fit (examples/llama.mk says so).
    [[ $config == llama_3_2_1b || $config == llama_3_8b ]] && args+=($AMD_PREFILL)
    start=$(date +%s.%N)
    "$mkdsl" "${args[@]}" -o "$co" --metadata "$meta" >"$tmp/mk.log" 2>&1
    rc=$?
    mk_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    if ((rc != 0)); then
      fail "$what: mkdsl exited $rc" "$(cat "$tmp/mk.log")"
      continue
    fi
    if ! "$mkdsl" "${args[@]}" --emit=amdgcn -o "$asm" --metadata "$tmp/asm.meta.json" >"$tmp/mk.log" 2>&1; then
      fail "$what --emit=amdgcn: mkdsl failed" "$(cat "$tmp/mk.log")"
      continue
    fi
    problems=()
    [[ -s $co ]] || problems+=("no code object written")
    [[ -s $meta ]] || problems+=("no metadata sidecar")
    grep -q '"entry": "mk_step"' "$meta" || problems+=("the sidecar does not name the entry mk_step")
    mapfile -t entries < <(sed -nE 's/^ *"entry": "([^"]+)",?$/\1/p' "$meta")
    grep -q "\"arch\": \"$t\"" "$meta" || problems+=("the sidecar's arch is not $t")
    if ((${#problems[@]})); then
      fail "$what" "${problems[@]}"
      continue
    fi

    "$readelf" --file-headers "$co" >"$tmp/hdr.txt" 2>&1 || problems+=("llvm-readelf --file-headers fails: $(head -n 3 "$tmp/hdr.txt")")
    grep -qE 'Machine:[[:space:]]+EM_AMDGPU' "$tmp/hdr.txt" || problems+=("not an EM_AMDGPU ELF")
    grep -qE 'Type:[[:space:]]+DYN' "$tmp/hdr.txt" || problems+=("not a shared object (a linked code object)")
    grep -qE "Flags:.*[, ]$t([, ]|\$)" "$tmp/hdr.txt" || problems+=("the ELF flags do not name $t: $(grep Flags "$tmp/hdr.txt")")

    "$readelf" --notes "$co" >"$tmp/notes.txt" 2>&1 || problems+=("llvm-readelf --notes fails")
    kernels=$(grep -cE '^(  - |    )\.name:[[:space:]]+' "$tmp/notes.txt")
    ((kernels == ${#entries[@]})) || problems+=("$kernels kernels in the metadata, expected the sidecar's ${#entries[@]} entries")
    grep -qE "^amdhsa\.target:[[:space:]]+amdgcn-amd-amdhsa--$t\$" "$tmp/notes.txt" ||
      problems+=("amdhsa.target is not amdgcn-amd-amdhsa--$t")
    summary=""
    for entry in "${entries[@]}"; do
      kernel_notes "$tmp/notes.txt" "$entry" >"$tmp/kernel.txt"
      if [[ ! -s $tmp/kernel.txt ]]; then
        problems+=("no kernel $entry in the code object metadata")
        continue
      fi
      vgpr=$(note "$tmp/kernel.txt" vgpr_count) agpr=$(note "$tmp/kernel.txt" agpr_count)
      sgpr=$(note "$tmp/kernel.txt" sgpr_count) scratch=$(note "$tmp/kernel.txt" private_segment_fixed_size)
      lds=$(note "$tmp/kernel.txt" group_segment_fixed_size) wave=$(note "$tmp/kernel.txt" wavefront_size)
      flat=$(note "$tmp/kernel.txt" max_flat_workgroup_size)
      vspill=$(note "$tmp/kernel.txt" vgpr_spill_count) sspill=$(note "$tmp/kernel.txt" sgpr_spill_count)
      block=$(meta_num "$meta" block "$entry") dyn=$(meta_num "$meta" dynamic_smem_bytes "$entry")
      for v in vgpr agpr sgpr scratch lds wave flat vspill sspill block dyn; do
        [[ ${!v} =~ ^[0-9]+$ ]] || problems+=("$entry: no number for $v in the metadata (got '${!v}')")
      done
      summary+="${summary:+; }$entry $vgpr VGPRs, $agpr AGPRs, $sgpr SGPRs, $lds+$dyn B LDS"
      ((${#problems[@]} == 0)) || continue
      ((vspill || sspill)) && summary+=", spills $vspill VGPRs $sspill SGPRs"
      waves_per_simd=$(((block / 64 + 3) / 4))
      budget=$((512 / waves_per_simd))
      ((budget > 512)) && budget=512
      ((wave == 64)) || problems+=("$entry: wavefront size $wave, expected 64")
      ((flat == block)) || problems+=("$entry: max flat workgroup size $flat differs from the sidecar's block $block")
      ((scratch == 0)) || problems+=("$entry: $scratch bytes of scratch per work-item (spills or stack), expected 0")
      # Register spills are gated for every entry but the prefill entries of the Llama-3.2-1B and
      # -8B configs, whose tuning is the H200's (printed in the summary; scratch stays gated).
      if [[ $entry == mk_step || ($config != llama_3_2_1b && $config != llama_3_8b) ]]; then
        ((vspill == 0 && sspill == 0)) || problems+=("$entry: spills: $vspill VGPRs, $sspill SGPRs")
      fi
      ((vgpr <= 256)) || problems+=("$entry: $vgpr VGPRs, more than the 256 a wave can address")
      ((vgpr + agpr <= budget)) || problems+=("$entry: $vgpr VGPRs + $agpr AGPRs, more than the $budget each of $waves_per_simd waves per SIMD may have")
      ((sgpr <= 108)) || problems+=("$entry: $sgpr SGPRs, more than 108")
      ((lds + dyn <= 65536)) || problems+=("$entry: $lds bytes static + $dyn dynamic LDS, more than 64 KiB")
    done

    "$objdump" -d --mcpu="$t" "$co" >"$tmp/dis.txt" 2>&1 || problems+=("llvm-objdump fails: $(head -n 3 "$tmp/dis.txt")")
    grep -q 's_endpgm' "$tmp/dis.txt" || problems+=("the disassembly has no s_endpgm")
    if grep -n '<unknown>' "$tmp/dis.txt" >"$tmp/unknown.txt"; then
      problems+=("unknown instructions in the disassembly:" "$(head -n 3 "$tmp/unknown.txt")")
    fi
    "$mc" -triple=amdgcn-amd-amdhsa -mcpu="$t" -filetype=obj "$asm" -o "$tmp/k.o" >"$tmp/mc.log" 2>&1 ||
      problems+=("llvm-mc rejects the --emit=amdgcn assembly:" "$(head -n 5 "$tmp/mc.log")")
    if ((${#problems[@]})); then
      fail "$what" "${problems[@]}"
      continue
    fi
    passed=$((passed + 1))
    echo "ok   $what (mkdsl ${mk_s}s, $(wc -c <"$co") bytes; $summary)"
  done
done

print_failures
echo "$passed passed, $failed failed"
((failed == 0))
