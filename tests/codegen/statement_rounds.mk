// Elementwise statements over a tile of more rounds than the straight-line 8 (backend/tile/
// task.cpp, forEachStatementElement): one whose value reads global memory loops over groups of 8
// rounds, each group's 8 loads issued before its 8 stores, so that they are in flight together
// (as a prefill norm's rows: 4 x 2048 f32 over 512 threads are 16 rounds); one without global
// loads loops a round at a time, each value stored before the next is read (grouping those only
// held registers). Checked in the LLVM IR, where the order is the generator's.
// RUN: %mkdsl build %s --emit=llvm --target sm_90a --stdlib %stdlib | %FileCheck %s
op rounds<T, K, BR = 4>(x: f32[T, K], p: f32[T, K]) -> (y: f32[T, K], z: f32[T, K])
    tasks b in T / BR {
    var h: f32[BR, K] = load x[b * BR : +BR, 0 : +K];
    h += load p[b * BR : +BR, 0 : +K];
    store y[b * BR : +BR, 0 : +K] = h;
    let d = h * 2.0;
    store z[b * BR : +BR, 0 : +K] = d;
}

config small {
    toks = 64;
    dim = 2048;
}

step decode(token: i32, x: f32[toks, dim], p: f32[toks, dim]) -> (y: f32[toks, dim], z: f32[toks, dim]) {
    let (y, z) = rounds(x, p);
    return (y, z);
}

// CHECK-LABEL: define void @mk_step(
// h = load x: eight loads from global memory, then the eight stores to h's shared memory.
// CHECK: load float, ptr addrspace(1)
// CHECK-NOT: store float
// CHECK: load float, ptr addrspace(1)
// CHECK-NOT: store float
// CHECK: load float, ptr addrspace(1)
// CHECK-NOT: store float
// CHECK: load float, ptr addrspace(1)
// CHECK-NOT: store float
// CHECK: load float, ptr addrspace(1)
// CHECK-NOT: store float
// CHECK: load float, ptr addrspace(1)
// CHECK-NOT: store float
// CHECK: load float, ptr addrspace(1)
// CHECK-NOT: store float
// CHECK: load float, ptr addrspace(1)
// CHECK: store float {{.*}}, ptr addrspace(3)
// CHECK: bar.sync 1, 512;
// h += load p: the same, each store after h's element is read.
// CHECK: load float, ptr addrspace(1)
// CHECK-NOT: store float
// CHECK: load float, ptr addrspace(1)
// CHECK-NOT: store float
// CHECK: load float, ptr addrspace(1)
// CHECK-NOT: store float
// CHECK: load float, ptr addrspace(1)
// CHECK-NOT: store float
// CHECK: load float, ptr addrspace(1)
// CHECK-NOT: store float
// CHECK: load float, ptr addrspace(1)
// CHECK-NOT: store float
// CHECK: load float, ptr addrspace(1)
// CHECK-NOT: store float
// CHECK: load float, ptr addrspace(1)
// CHECK: load float, ptr addrspace(3)
// CHECK: store float {{.*}}, ptr addrspace(3)
// CHECK: bar.sync 1, 512;
// store y = h: no global load, so each of h's elements is stored before the next is read.
// CHECK: [[H:%[0-9]+]] = load float, ptr addrspace(3)
// CHECK-NOT: load float
// CHECK: store float [[H]], ptr addrspace(1)
// CHECK: bar.sync 1, 512;
