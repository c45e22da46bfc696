// The sync sequence between tasks on different CUs on AMDGPU (gfx942, gfx90a). The embed tasks
// produce x; every rmsnorm_swiglu task reads all of x, so it waits on the embed node's counter.
//   consumer: thread 0 spins on an acquire load of the counter at agent scope (expected = epoch *
//             2 producers, compared wrap-safe); then the workgroup meets at s_barrier;
//   producer: after its stores every wave releases at agent scope and the workgroup meets at
//             s_barrier; then thread 0 adds to the counter with an agent-scope release.
// Native LLVM atomics with syncscope("agent") (NVPTX spells them in inline PTX). There is no
// loader warp, so the compute threads are the whole workgroup and the one barrier of the
// hardware, s_barrier, is every barrier of the kernel: each between workgroup fences, as
// __syncthreads is. On gfx942 (an L2 per XCD) the agent scope writes back the L2
// (buffer_wbl2 sc1) and invalidates on acquire (buffer_inv sc1); on gfx90a it waits
// (s_waitcnt vmcnt(0)) and invalidates the L1 (buffer_wbinvl1_vol).
//
// RUN: %mkdsl build %s --emit=llvm --target gfx942 --sms 2 --stdlib %stdlib | %FileCheck %s --check-prefix=LLVM
// RUN: %mkdsl build %s --emit=llvm --target gfx90a --sms 2 --stdlib %stdlib | %FileCheck %s --check-prefix=LLVM
// RUN: %mkdsl build %s --emit=amdgcn --target gfx942 --sms 2 --stdlib %stdlib | %FileCheck %s --check-prefixes=ASM,ASM942
// RUN: %mkdsl build %s --emit=amdgcn --target gfx90a --sms 2 --stdlib %stdlib | %FileCheck %s --check-prefixes=ASM,ASM90A
// What comes right before each s_barrier and the atomic add: the barrier before the signal waits
// for the wave's stores (and writes back the L2 on gfx942).
// RUN: %mkdsl build %s --emit=amdgcn --target gfx942 --sms 2 --stdlib %stdlib | \
// RUN:   awk '{ sub(/^[ \t]+/, ""); if ($1 == "s_barrier" || $1 == "global_atomic_add") print p2 " | " p1 " | " $1; p2 = p1; p1 = $0 }' | \
// RUN:   %FileCheck %s --check-prefix=BEFORE942
// RUN: %mkdsl build %s --emit=amdgcn --target gfx90a --sms 2 --stdlib %stdlib | \
// RUN:   awk '{ sub(/^[ \t]+/, ""); if ($1 == "s_barrier" || $1 == "global_atomic_add") print p2 " | " p1 " | " $1; p2 = p1; p1 = $0 }' | \
// RUN:   %FileCheck %s --check-prefix=BEFORE90A
// Only one kind of block barrier, and no NVPTX one.
// RUN: %mkdsl build %s --emit=amdgcn --target gfx942 --sms 2 --stdlib %stdlib | \
// RUN:   grep -E '^[[:space:]]*(s_barrier|bar\.|barrier)' | sed 's/^[[:space:]]*//' | sort -u | \
// RUN:   %FileCheck %s --check-prefix=BARS
import std.embed;
import std.mlp;

config small {
    vocab = 32;
    hidden = 128;
    ffn = 64;
}

weight table: bf16[vocab, hidden] = "model.embed_tokens.weight";
weight norm: bf16[hidden] = "model.norm.weight";
weight gate_up: bf16[2 * ffn, hidden] tiled(16, 128) = ["model.gate.weight", "model.up.weight"];

step decode(token: i32) -> (y: bf16[ffn]) {
    let x = embed(table, token);
    let y = rmsnorm_swiglu(gate_up, norm, x);
    return (y);
}

// LLVM: target triple = "amdgcn-amd-amdhsa"
// LLVM: define amdgpu_kernel void @mk_step(
// The start: thread 0 clears the abort flag, then the whole workgroup meets.
// LLVM: fence syncscope("workgroup") release
// LLVM-NEXT: tail call void @llvm.amdgcn.s.barrier()
// LLVM-NEXT: fence syncscope("workgroup") acquire
// The signal (LLVM lays it out before the waits of the task it ends): every wave's stores
// complete at agent scope before the barrier, then thread 0's release add (further down).
// LLVM: task.end:
// LLVM-NEXT: fence syncscope("agent") release
// LLVM-NEXT: tail call void @llvm.amdgcn.s.barrier()
// LLVM-NEXT: fence syncscope("workgroup") acquire
// The wait: the (counter, count) pair from the wait table, the counter in %sync against
// epoch * count, wrap-safe (seen - expected >= 0).
// LLVM: getelementptr i32, ptr addrspace(1) @mk_waits
// LLVM-NEXT: %[[CTR:[0-9]+]] = load i32, ptr addrspace(1) %{{[0-9]+}}, align 8
// LLVM: getelementptr i32, ptr addrspace(1) @mk_waits
// LLVM-NEXT: %[[PER:[0-9]+]] = load i32, ptr addrspace(1) %{{[0-9]+}}, align 4
// LLVM-NEXT: %[[WANT:[0-9]+]] = mul i32 %[[PER]], %epoch
// LLVM-NEXT: %[[CTR64:[0-9]+]] = sext i32 %[[CTR]] to i64
// LLVM-NEXT: %[[AT:[0-9]+]] = getelementptr i32, ptr addrspace(1) %sync, i64 %[[CTR64]]
// LLVM-NEXT: %[[SEEN:[0-9]+]] = load atomic i32, ptr addrspace(1) %[[AT]] syncscope("agent") acquire, align 4
// LLVM-NEXT: %[[DIFF:[0-9]+]] = sub i32 %[[SEEN]], %[[WANT]]
// LLVM-NEXT: icmp sgt i32 %[[DIFF]], -1
// The polls after the first, in the spin loop.
// LLVM: wait.backedge:
// LLVM-NEXT: load atomic i32, ptr addrspace(1) %[[AT]] syncscope("agent") acquire, align 4
// LLVM: atomicrmw add ptr addrspace(1) %sync, i32 1 syncscope("agent") release, align 4
// LLVM-NOT: mbarrier
// LLVM: attributes #0 = { "amdgpu-flat-work-group-size"="1,512"{{.*}}"amdgpu-waves-per-eu"="2,2"

// ASM942: .amdgcn_target "amdgcn-amd-amdhsa--gfx942"
// ASM90A: .amdgcn_target "amdgcn-amd-amdhsa--gfx90a"
// ASM-LABEL: mk_step:
// ASM: s_barrier
// The acquire: the load bypasses the caches, then the CU's caches are invalidated.
// ASM942: global_load_dword [[SEEN:v[0-9]+]], v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}] sc1
// ASM942-NEXT: s_waitcnt vmcnt(0)
// ASM942-NEXT: buffer_inv sc1
// ASM90A: global_load_dword [[SEEN:v[0-9]+]], v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}] glc
// ASM90A-NEXT: s_waitcnt vmcnt(0)
// ASM90A-NEXT: buffer_wbinvl1_vol
// ASM: s_endpgm
// ASM: .amdhsa_kernel mk_step
// No LDS is static: the kernel's shared memory is dynamic (the sidecar's dynamic_smem_bytes).
// ASM-NEXT: .amdhsa_group_segment_fixed_size 0
// ASM-NEXT: .amdhsa_private_segment_fixed_size 0
// ASM-NOT: .amdhsa_kernel

// BEFORE942: buffer_wbl2 sc1 | s_waitcnt vmcnt(0) | s_barrier
// BEFORE942: | buffer_wbl2 sc1 | global_atomic_add
// BEFORE90A: | s_waitcnt vmcnt(0) | s_barrier
// BEFORE90A: | global_atomic_add

// BARS: s_barrier
// BARS-NOT: {{.}}
