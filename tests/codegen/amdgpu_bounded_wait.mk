// The bounded wait on AMDGPU (gfx942, gfx90a). argmax_final waits for every LM head task,
// half of which run on the other CU. The wait spins on the counter's acquire load; every 64
// polls it reads s_memrealtime (a 100 MHz clock: ticks * 10 are nanoseconds, compared with the
// timeout parameter; the clock starts only if the first poll finds the count short) and the error buffer's word 0 (has another block failed?), and otherwise
// sleeps (s_sleep 1: ~64 clocks) before the next poll. Past the timeout thread 0 claims word 0
// with an agent-scope compare-and-swap, writes the record (sm, task, counter, expected, seen,
// kind 1, epoch) and raises the block's abort flag in LDS.
//
// RUN: %mkdsl build %s --emit=llvm --target gfx942 --sms 2 --stdlib %stdlib | %FileCheck %s --check-prefix=LLVM
// RUN: %mkdsl build %s --emit=llvm --target gfx90a --sms 2 --stdlib %stdlib | %FileCheck %s --check-prefix=LLVM
// The clock, the sleep and the acquire poll are inside a loop of the machine code.
// RUN: %mkdsl build %s --emit=amdgcn --target gfx942 --sms 2 --stdlib %stdlib | \
// RUN:   %S/ptx_in_loop.sh '^[[:space:]]*s_sleep 1$' '^[[:space:]]*s_memrealtime' 'global_load_dword .* sc1$' 'buffer_inv sc1'
// RUN: %mkdsl build %s --emit=amdgcn --target gfx90a --sms 2 --stdlib %stdlib | \
// RUN:   %S/ptx_in_loop.sh '^[[:space:]]*s_sleep 1$' '^[[:space:]]*s_memrealtime' 'global_load_dword .* glc$' 'buffer_wbinvl1_vol'
// Fault injection (--test-drop-signal) builds too, with the same wait.
// RUN: %mkdsl build %s --emit=llvm --target gfx942 --sms 2 --stdlib %stdlib --test-drop-signal 0 | \
// RUN:   %FileCheck %s --check-prefix=LLVM
import std.sampling;

config small {
    vocab = 256;
    hidden = 64;
}

weight norm: bf16[hidden] = "model.norm.weight";
weight lm_head: bf16[vocab, hidden] tiled(32, 64) = "lm_head.weight";

step head(x: f32[hidden]) -> (logits: f32[vocab], next: i32) {
    let (lg, pm, pi) = rmsnorm_lm_head_argmax(lm_head, norm, x);
    let nx = argmax_final(pm, pi);
    return (lg, nx);
}

// LLVM: define amdgpu_kernel void @mk_step({{.*}}ptr addrspace(1) noalias %error, {{.*}}, i32 %epoch, i64 %timeout)
// LLVM-DAG: %[[SM:[0-9]+]] = tail call i32 @llvm.amdgcn.workgroup.id.x()
// LLVM-DAG: %[[W1:[0-9]+]] = getelementptr i8, ptr addrspace(1) %error, i64 4
// LLVM-DAG: %[[W2:[0-9]+]] = getelementptr i8, ptr addrspace(1) %error, i64 8
// LLVM-DAG: %[[W3:[0-9]+]] = getelementptr i8, ptr addrspace(1) %error, i64 12
// LLVM-DAG: %[[W4:[0-9]+]] = getelementptr i8, ptr addrspace(1) %error, i64 16
// LLVM-DAG: %[[W5:[0-9]+]] = getelementptr i8, ptr addrspace(1) %error, i64 20
// LLVM-DAG: %[[W6:[0-9]+]] = getelementptr i8, ptr addrspace(1) %error, i64 24
// LLVM-DAG: %[[W7:[0-9]+]] = getelementptr i8, ptr addrspace(1) %error, i64 28
// The first poll, before any clock read.
// LLVM: load atomic i32, ptr addrspace(1) %[[CTR:[0-9]+]] syncscope("agent") acquire, align 4
// LLVM-NOT: memrealtime
// Every 64 polls: another block's failure (a relaxed agent-scope load), the time in ns.
// LLVM: wait.check:
// LLVM-NEXT: %[[FLAG:[0-9]+]] = load atomic i32, ptr addrspace(1) %error syncscope("agent") monotonic, align 4
// LLVM-NEXT: icmp ne i32 %[[FLAG]], 0
// LLVM-NEXT: %[[NOW:[0-9]+]] = tail call i64 @llvm.amdgcn.s.memrealtime()
// LLVM-NEXT: %[[TICKS:[a-z.0-9]+]] = sub i64 %[[NOW]], %[[START:[0-9]+]]
// LLVM-NEXT: %[[NS:[a-z.0-9]+]] = mul i64 %[[TICKS]], 10
// LLVM-NEXT: icmp ugt i64 %[[NS]], %timeout
// LLVM: wait.fail:
// LLVM-NEXT: %[[OLD:[0-9]+]] = cmpxchg ptr addrspace(1) %error, i32 0, i32 1 syncscope("agent") monotonic monotonic, align 4
// LLVM-NEXT: %[[WON:[0-9]+]] = extractvalue { i32, i1 } %[[OLD]], 1
// LLVM-NEXT: br i1 %[[WON]], label %wait.record, label
// LLVM: wait.record:
// LLVM-NEXT: store volatile i32 %[[SM]], ptr addrspace(1) %[[W1]]
// LLVM-NEXT: store volatile i32 %{{[0-9]+}}, ptr addrspace(1) %[[W2]]
// LLVM-NEXT: store volatile i32 %{{[0-9]+}}, ptr addrspace(1) %[[W3]]
// LLVM-NEXT: store volatile i32 %{{[0-9]+}}, ptr addrspace(1) %[[W4]]
// LLVM-NEXT: store volatile i32 %{{[0-9]+}}, ptr addrspace(1) %[[W5]]
// LLVM-NEXT: store volatile i32 1, ptr addrspace(1) %[[W6]]
// LLVM-NEXT: store volatile i32 %epoch, ptr addrspace(1) %[[W7]]
// A wait that is not over: the start time, then the spin's polls, and the sleep on the way.
// LLVM: wait.slow:
// LLVM-NEXT: %[[START]] = tail call i64 @llvm.amdgcn.s.memrealtime()
// LLVM-NEXT: load atomic i32, ptr addrspace(1) %[[CTR]] syncscope("agent") acquire, align 4
// LLVM: wait.backedge:
// LLVM-NEXT: load atomic i32, ptr addrspace(1) %[[CTR]] syncscope("agent") acquire, align 4
// LLVM: wait.sleep:
// LLVM-NEXT: tail call void @llvm.amdgcn.s.sleep(i32 1)
// LLVM-NEXT: br label %wait.backedge
// The abort flag, in LDS.
// LLVM: store i32 1, ptr addrspace(3) @mk_smem, align 128
