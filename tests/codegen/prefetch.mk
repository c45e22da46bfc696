// Prefetches (docs/backend.md, "The kernel"): while a task runs, its compute threads start the
// next task record's cache line; when a task body starts, it prefetches into L1 each activation
// region it reads at an address known from its task index alone, on every path. Here: the
// record, and `x[t * 4 : +4]` (read by the last statement, after a reduction); the read under
// the `if` is not prefetched (its region can be out of bounds when the branch is not taken), nor
// the read at a runtime position `x[k : +4]`.
//
// RUN: %mkdsl build %s --emit=llvm --target sm_90a --sms 2 --stdlib %stdlib | %FileCheck %s --check-prefix=LLVM
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --sms 2 --stdlib %stdlib | %FileCheck %s --check-prefix=PTX
op shifted<N>(x: f32[N], k: i32) -> y: f32[N]
    tasks t in N / 4 {
    let s = sum(load x[k : +4]);
    if t > 0 {
        store y[t * 4 - 4 : +4] = load x[t * 4 - 4 : +4];
    }
    store y[t * 4 : +4] = (load x[t * 4 : +4]) * s;
}

config small {
    n = 64;
}

step decode(x: f32[n], k: i32) -> (y: f32[n]) {
    let y = shifted(x, k);
    return (y);
}

// LLVM: define void @mk_step(
// LLVM-COUNT-2: call void asm sideeffect "prefetch.global.L1 [$0];", "l"
// LLVM-NOT: prefetch.global.L1
// PTX-COUNT-2: prefetch.global.L1 [{{%rd[0-9]+}}];
// PTX-NOT: prefetch.global.L1
