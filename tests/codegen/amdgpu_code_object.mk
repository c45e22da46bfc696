// The AMDGPU code object (issue 8): `mkdsl build F.mk --target gfx942 -o F.hsaco` links LLVM's ELF
// object with ld.lld into a loadable code object (the same as clang's for HIP: ET_DYN, OS/ABI
// AMDGPU-HSA, code object v5) and writes the same metadata sidecar as for PTX. The kernel is
// `mk_step` with the eight parameters in the NVPTX order and sizes (six pointers, then epoch u32
// and timeout u64: 64 bytes of kernel arguments and no hidden ones); a workgroup of 512
// work-items (8 waves of 64), no static LDS (all of it dynamic, the sidecar's
// dynamic_smem_bytes) and no scratch. xnack and sramecc stay "any", so one code object runs in
// either mode. --target gfx942 picks the mi300x description (304 CUs), gfx90a the mi250x's
// (one GCD: 110 CUs).
// REQUIRES: lld
//
// RUN: %mkdsl build %s --target gfx942 --stdlib %stdlib -o %t.hsaco && \
// RUN:   %readelf --file-headers %t.hsaco | %FileCheck %s --check-prefixes=ELF,ELF942 && \
// RUN:   %readelf --notes %t.hsaco | %FileCheck %s --check-prefixes=NOTES,NOTES942 && \
// RUN:   %FileCheck %s --check-prefixes=META,META942 < %t.meta.json
// RUN: %mkdsl build %s --target gfx90a --stdlib %stdlib -o %t90.hsaco && \
// RUN:   %readelf --file-headers %t90.hsaco | %FileCheck %s --check-prefixes=ELF,ELF90A && \
// RUN:   %readelf --notes %t90.hsaco | %FileCheck %s --check-prefixes=NOTES,NOTES90A && \
// RUN:   %FileCheck %s --check-prefixes=META,META90A < %t90.meta.json
// --emit=hsaco with any name; the sidecar beside it.
// RUN: %mkdsl build %s --target gfx942 --emit=hsaco --stdlib %stdlib -o %t.co && \
// RUN:   cmp %t.co %t.hsaco && test -s %t.meta.json
// The same input gives the same bytes.
// RUN: %mkdsl build %s --target gfx942 --stdlib %stdlib -o %t2.hsaco && cmp %t.hsaco %t2.hsaco
// -v: the resources from the code object metadata, and the dynamic LDS to pass at launch.
// RUN: %mkdsl build %s --target gfx942 --stdlib %stdlib -o %t3.hsaco -v 2>&1 | %FileCheck %s --check-prefix=VERBOSE
// Without --emit or -o an AMDGPU target prints its AMDGCN assembly.
// RUN: %mkdsl build %s --target gfx90a --stdlib %stdlib | %FileCheck %s --check-prefix=ASM
// ld.lld that fails: a clear error and no code object (nor sidecar) left behind.
// RUN: printf '#!/bin/sh\necho "ld.lld: error: simulated" >&2\nexit 1\n' > %t.fail-lld && chmod +x %t.fail-lld && \
// RUN:   ! env MKDSL_LLD=%t.fail-lld %mkdsl build %s --target gfx942 --stdlib %stdlib -o %t4.hsaco 2> %t4.err && \
// RUN:   %FileCheck %s --check-prefix=LLDFAIL < %t4.err && test ! -e %t4.hsaco && test ! -e %t4.meta.json
// RUN: ! env MKDSL_LLD=/nonexistent/ld.lld %mkdsl build %s --target gfx942 --stdlib %stdlib -o %t5.hsaco 2>&1 | \
// RUN:   %FileCheck %s --check-prefix=NOLLD
import std.embed;

config small {
    vocab = 32;
    hidden = 256;
}

weight table: bf16[vocab, hidden] = "model.embed_tokens.weight";

step decode(token: i32, pos: i32) -> (x: f32[hidden]) {
    let x = embed(table, token);
    return (x);
}

// ELF: OS/ABI: AMDGPU - HSA
// ELF-NEXT: ABI Version: 3
// ELF-NEXT: Type: DYN (Shared object file)
// ELF-NEXT: Machine: EM_AMDGPU
// ELF942: Flags: 0x54C, gfx942, xnack, sramecc
// ELF90A: Flags: 0x53F, gfx90a, xnack, sramecc

// NOTES: NT_AMDGPU_METADATA
// NOTES: amdhsa.kernels:
// NOTES: .name: weights
// NOTES-NEXT: .offset: 0
// NOTES-NEXT: .size: 8
// NOTES-NEXT: .value_kind: global_buffer
// NOTES: .name: state
// NOTES: .name: activations
// NOTES: .name: sync
// NOTES: .name: error
// NOTES: .name: inputs
// NOTES-NEXT: .offset: 40
// NOTES: .name: epoch
// NOTES-NEXT: .offset: 48
// NOTES-NEXT: .size: 4
// NOTES-NEXT: .value_kind: by_value
// NOTES: .name: timeout
// NOTES-NEXT: .offset: 56
// NOTES-NEXT: .size: 8
// NOTES-NEXT: .value_kind: by_value
// NOTES-NEXT: .group_segment_fixed_size: 0
// NOTES-NEXT: .kernarg_segment_align: 8
// NOTES-NEXT: .kernarg_segment_size: 64
// NOTES-NEXT: .max_flat_workgroup_size: 512
// NOTES-NEXT: .name: mk_step
// NOTES-NEXT: .private_segment_fixed_size: 0
// NOTES-NEXT: .sgpr_count: {{[0-9]+}}
// NOTES-NEXT: .sgpr_spill_count: 0
// NOTES-NEXT: .symbol: mk_step.kd
// NOTES-NEXT: .uses_dynamic_stack: false
// NOTES-NEXT: .vgpr_count: {{[0-9]+}}
// NOTES-NEXT: .vgpr_spill_count: 0
// NOTES-NEXT: .wavefront_size: 64
// NOTES942-NEXT: amdhsa.target: amdgcn-amd-amdhsa--gfx942
// NOTES90A-NEXT: amdhsa.target: amdgcn-amd-amdhsa--gfx90a
// NOTES-NOT: .name: mk_step

// META942: "target": "mi300x",
// META942-NEXT: "arch": "gfx942",
// META90A: "target": "mi250x",
// META90A-NEXT: "arch": "gfx90a",
// META-NEXT: "step": "decode",
// META-NEXT: "entry": "mk_step",
// META942-NEXT: "grid": 304,
// META90A-NEXT: "grid": 110,
// META-NEXT: "block": 512,
// META-NEXT: "compute_threads": 512,
// META-NEXT: "loader_warp": false,
// META-NEXT: "ring_slots": 0,
// META-NEXT: "ring_slot_bytes": 0,
// META-NEXT: "dynamic_smem_bytes": {{[1-9][0-9]*}},
// META: "params": ["weights", "state", "activations", "sync", "error", "inputs", "epoch", "timeout"],

// VERBOSE: gfx942: mk_step: {{[0-9]+}} VGPRs, 0 AGPRs, {{[0-9]+}} SGPRs, 0 bytes static LDS, 0 bytes scratch, 0 VGPR and 0 SGPR spills; {{[0-9]+}} bytes dynamic LDS at launch

// ASM: .amdgcn_target "amdgcn-amd-amdhsa--gfx90a"
// ASM: .amdhsa_kernel mk_step

// LLDFAIL: mkdsl: error: ld.lld failed to link the code object: {{.*}}fail-lld exited with status 1
// LLDFAIL-NEXT: ld.lld: error: simulated

// NOLLD: mkdsl: error: --emit=hsaco needs ld.lld: $MKDSL_LLD is '/nonexistent/ld.lld', which is not an executable file [E0910]
