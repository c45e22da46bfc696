// An `if` on a compile-time condition in an op body leaves only its taken branch, in line
// (lowering/graph.cpp): the backend plans the code that runs. Here the untaken branch holds the
// whole 512 KB tensor as one tile; planned, it would fail the build for shared memory (E0810).
// RUN: %mkdsl build %s --emit=tasks --stdlib %stdlib | %FileCheck %s
op pick<N, B = 64, WHOLE = 0>(x: f32[N]) -> y: f32[N]
    tasks t in N / B {
    if WHOLE == 1 {
        let v = load x[0 : +N];
        store y[0 : +N] = v * v;
    } else {
        store y[t * B : +B] = load x[t * B : +B] * 2.0;
    }
}

config small {
    dim = 131072;
}

step decode(x: f32[dim]) -> (y: f32[dim]) {
    let y = pick(x);
    return y;
}

// CHECK: // 2048 tasks
// CHECK: task 0 pick#0[0] reads x[0..64] writes y.0[0..64] bytes
// CHECK: task 2047 pick#0[2047] reads x[131008..131072] writes y.0[131008..131072] bytes
