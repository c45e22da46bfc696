// Loop prefetches (docs/backend.md, "The kernel"): in a loop, the loads whose regions follow from
// the task's indices and the loop variable alone are brought into L2 one iteration ahead, and
// the first iteration's before the loop, so that a later load of an iteration (here `v`, read
// after `k`'s sum) does not wait out a trip to memory. Here: `k[t, p : +8]` and `v[t, p : +8]`,
// each before the loop and under `p + 8 < hi` in it; not the read under the `if`, nor the one at
// a runtime position `k[t, n : +8]`.
//
// RUN: %mkdsl build %s --emit=llvm --target sm_90a --sms 2 --stdlib %stdlib | %FileCheck %s --check-prefix=LLVM
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --sms 2 --stdlib %stdlib | %FileCheck %s --check-prefix=PTX
op scan<T, S>(k: f32[T, S], v: f32[T, S], n: i32) -> y: f32[T]
    tasks t in T {
    var acc: f32 = 0.0;
    for p in 0 .. n + 1 by 8 {
        let s = sum(load k[t, p : +8]);
        acc = acc + s * sum(load v[t, p : +8]);
        if p > 8 {
            acc = acc + sum(load v[t, p - 8 : +8]);
        }
        acc = acc + sum(load k[t, n : +8]);
    }
    store y[t] = acc;
}

config small {
    t = 4;
    s = 64;
}

step decode(k: f32[t, s], v: f32[t, s], n: i32) -> (y: f32[t]) {
    let y = scan(k, v, n);
    return (y);
}

// LLVM: define void @mk_step(
// LLVM-COUNT-4: call void asm sideeffect "prefetch.global.L2 [$0];", "l"
// LLVM-NOT: prefetch.global.L2
// PTX-COUNT-4: prefetch.global.L2 [{{%rd[0-9]+}}];
// PTX-NOT: prefetch.global.L2
