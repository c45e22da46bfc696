// The bounded wait (issue 4, golden c). A wait spins at most `timeout` nanoseconds of
// %globaltimer (kernel parameter 7, u64), checking the time, and whether another block already
// failed (error word 0), every so many polls. Past it, thread 0 claims error word 0 with a
// compare-and-swap (the first failure of the launch wins), writes the record (sm, task, counter,
// expected, seen, kind, epoch) to words 1..7 of the error buffer (parameter 4), and raises the
// block's abort flag in shared memory; the compute threads leave the kernel at the next barrier.
// A lost signal ends the step with an error instead of hanging the GPU.
//
// The program has no weights, so no loader warp and no ring: the only wait is rmsnorm's wait on
// the attention_combine tasks (on the other SM), and its record has kind 1 (a counter wait).
//
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --sms 2 --stdlib %stdlib -o %t.sm_90a.ptx && \
// RUN:   %FileCheck %s --check-prefix=PTX < %t.sm_90a.ptx && %FileCheck %s --check-prefix=TIME < %t.sm_90a.ptx && \
// RUN:   %FileCheck %s --check-prefix=EXIT < %t.sm_90a.ptx
// RUN: %mkdsl build %s --emit=ptx --target sm_90 --sms 2 --stdlib %stdlib -o %t.sm_90.ptx && \
// RUN:   %FileCheck %s --check-prefix=PTX < %t.sm_90.ptx && %FileCheck %s --check-prefix=TIME < %t.sm_90.ptx && \
// RUN:   %FileCheck %s --check-prefix=EXIT < %t.sm_90.ptx
// RUN: %mkdsl build %s --emit=ptx --target sm_80 --sms 2 --stdlib %stdlib -o %t.sm_80.ptx && \
// RUN:   %FileCheck %s --check-prefix=PTX < %t.sm_80.ptx && %FileCheck %s --check-prefix=TIME < %t.sm_80.ptx && \
// RUN:   %FileCheck %s --check-prefix=EXIT < %t.sm_80.ptx
// RUN: %mkdsl build %s --emit=llvm --target sm_90a --sms 2 --stdlib %stdlib | %FileCheck %s --check-prefix=LLVM
// The timeout is checked inside the spin loop, not once before or after it.
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --sms 2 --stdlib %stdlib | \
// RUN:   %S/ptx_in_loop.sh 'ld\.acquire\.gpu\.global\.u32' '%globaltimer' 'setp\.l[et]\.u64' 'ld\.relaxed\.gpu\.global\.u32'
// RUN: %mkdsl build %s --emit=ptx --target sm_80 --sms 2 --stdlib %stdlib | \
// RUN:   %S/ptx_in_loop.sh 'ld\.acquire\.gpu\.global\.u32' '%globaltimer' 'setp\.l[et]\.u64' 'ld\.relaxed\.gpu\.global\.u32'
// Fault injection (--test-drop-signal, test-only): the program still compiles, with the same wait.
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --sms 2 --stdlib %stdlib --test-drop-signal 0 | \
// RUN:   %FileCheck %s --check-prefix=PTX
import std.attention;
import std.norm;

config small {
    heads = 2;
    head_dim = 32;
    splits = 2;
}

step decode(pm: f32[splits, heads], pl: f32[splits, heads], pacc: f32[splits, heads * head_dim])
    -> (y: bf16[heads * head_dim]) {
    let o = attention_combine(pm, pl, pacc);
    let y = rmsnorm(o, o);
    return (y);
}

// No loader warp: the block is the 512 compute threads.
// PTX-LABEL: .visible .entry mk_step(
// PTX: .maxntid 512, 1, 1
// The record, in whatever order LLVM lays the blocks out: every word from the right source.
// PTX-DAG: mov.u32 [[SM:%r[0-9]+]], %ctaid.x;
// PTX-DAG: ld.param.u32 [[EPOCH:%r[0-9]+]], [mk_step_param_6];
// PTX-DAG: ld.param.u64 [[ERR:%rd[0-9]+]], [mk_step_param_4];
// PTX-DAG: ld.relaxed.gpu.global.u32 {{%r[0-9]+}}, [[[ERR]]];
// PTX-DAG: atom.relaxed.gpu.global.cas.b32 {{%r[0-9]+}}, [[[ERR]]], {{%r[0-9]+}}, [[ONE:%r[0-9]+]];
// PTX-DAG: st.volatile.global.u32 [[[ERR]]+4], [[SM]];
// PTX-DAG: st.volatile.global.u32 [[[ERR]]+8], {{%r[0-9]+}};
// PTX-DAG: st.volatile.global.u32 [[[ERR]]+12], {{%r[0-9]+}};
// PTX-DAG: st.volatile.global.u32 [[[ERR]]+16], {{%r[0-9]+}};
// PTX-DAG: st.volatile.global.u32 [[[ERR]]+20], {{%r[0-9]+}};
// PTX-DAG: st.volatile.global.u32 [[[ERR]]+24], {{%r[0-9]+}};
// PTX-DAG: st.volatile.global.u32 [[[ERR]]+28], [[EPOCH]];
// PTX-DAG: st.shared.u32 [mk_smem], [[ONE]];

// The timeout test: (now - start) against parameter 7.
// TIME: ld.param.u64 [[TIMEOUT:%rd[0-9]+]], [mk_step_param_7];
// TIME: mov.u64 {{%rd[0-9]+}}, %globaltimer;
// TIME: mov.u64 [[NOW:%rd[0-9]+]], %globaltimer;
// TIME-NEXT: // end inline asm
// TIME-NEXT: sub.s64 [[SPENT:%rd[0-9]+]], [[NOW]], {{%rd[0-9]+}};
// TIME-NEXT: setp.le.u64 {{%p[0-9]+}}, [[SPENT]], [[TIMEOUT]];

// Leaving: after a barrier, every compute thread reads the abort flag and returns when it is set.
// EXIT: bar.sync 1, 512;
// EXIT-NEXT: // end inline asm
// EXIT-NEXT: ld.shared.u32 [[FLAG:%r[0-9]+]], [mk_smem];
// EXIT-NEXT: setp.eq.s32 {{%p[0-9]+}}, [[FLAG]], 0;
// EXIT: ret;

// The same in the LLVM IR, where the constants are still visible.
// LLVM: define void @mk_step({{.*}}ptr addrspace(1) noalias %error, ptr addrspace(1) {{.*}}%inputs, i32 %epoch, i64 %timeout)
// LLVM-DAG: %[[SM:[0-9]+]] = tail call {{.*}}i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
// LLVM-DAG: %[[ERRI:[0-9]+]] = ptrtoint ptr addrspace(1) %error to i64
// LLVM-DAG: %[[W1:[0-9]+]] = getelementptr i8, ptr addrspace(1) %error, i64 4
// LLVM-DAG: %[[W2:[0-9]+]] = getelementptr i8, ptr addrspace(1) %error, i64 8
// LLVM-DAG: %[[W3:[0-9]+]] = getelementptr i8, ptr addrspace(1) %error, i64 12
// LLVM-DAG: %[[W4:[0-9]+]] = getelementptr i8, ptr addrspace(1) %error, i64 16
// LLVM-DAG: %[[W5:[0-9]+]] = getelementptr i8, ptr addrspace(1) %error, i64 20
// LLVM-DAG: %[[W6:[0-9]+]] = getelementptr i8, ptr addrspace(1) %error, i64 24
// LLVM-DAG: %[[W7:[0-9]+]] = getelementptr i8, ptr addrspace(1) %error, i64 28
// The first poll reads no clock (a wait that is already over costs one load); the spin starts
// the clock, polls again, and every 64 polls reads the error word and checks the clock.
// LLVM: tail call i32 asm sideeffect "ld.acquire.gpu.global.u32 $0, [$1];"
// LLVM-NOT: globaltimer
// LLVM: wait:
// LLVM: tail call i32 asm sideeffect "ld.acquire.gpu.global.u32 $0, [$1];"
// LLVM: wait.check:
// LLVM-NEXT: tail call i32 asm sideeffect "ld.relaxed.gpu.global.u32 $0, [$1];", "=r,l,~{memory}"(i64 %[[ERRI]])
// LLVM: %[[NOW:[0-9]+]] = tail call i64 asm sideeffect "mov.u64 $0, %globaltimer;"
// LLVM-NEXT: %[[SPENT:[0-9]+]] = sub i64 %[[NOW]], %[[START:[0-9]+]]
// LLVM-NEXT: icmp ugt i64 %[[SPENT]], %timeout
// LLVM: wait.fail:
// LLVM-NEXT: %[[OLD:[0-9]+]] = tail call i32 asm sideeffect "atom.relaxed.gpu.global.cas.b32 $0, [$1], $2, $3;", "=r,l,r,r,~{memory}"(i64 %[[ERRI]], i32 0, i32 1)
// LLVM-NEXT: %[[WON:[0-9]+]] = icmp eq i32 %[[OLD]], 0
// LLVM-NEXT: br i1 %[[WON]], label %wait.record, label
// LLVM: wait.record:
// LLVM-NEXT: store volatile i32 %[[SM]], ptr addrspace(1) %[[W1]]
// LLVM-NEXT: store volatile i32 %{{[0-9]+}}, ptr addrspace(1) %[[W2]]
// LLVM-NEXT: store volatile i32 %{{[0-9]+}}, ptr addrspace(1) %[[W3]]
// LLVM-NEXT: store volatile i32 %{{[0-9]+}}, ptr addrspace(1) %[[W4]]
// LLVM-NEXT: store volatile i32 %{{[0-9]+}}, ptr addrspace(1) %[[W5]]
// LLVM-NEXT: store volatile i32 1, ptr addrspace(1) %[[W6]]
// LLVM-NEXT: store volatile i32 %epoch, ptr addrspace(1) %[[W7]]
// LLVM: wait.slow:
// LLVM-NEXT: %[[START]] = tail call i64 asm sideeffect "mov.u64 $0, %globaltimer;"
// LLVM: store i32 1, ptr addrspace(3) @mk_smem
