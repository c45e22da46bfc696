// A scalar parameter bound to a rank-0 tensor that another op of the step writes (std.embed's
// `row_position`, the position of a prefill's last row for its decode attention) is read after
// the task's waits, in its body (`task.run`), not with the task's other arguments, whose loads
// are issued before the waits: read there, it raced its producer (the 1B's prefill, then decode
// from its caches, 0.3 rel L2 from transformers on an H100; bench/NOTES.md 41).
// RUN: %mkdsl build %s --emit=llvm --target sm_90a --stdlib %stdlib | %FileCheck %s
op position(p0: i32, r: i32) -> p: i32
    tasks t in 1 {
    store p = p0 + r;
}

op scaled(x: f32[64], pos: i32) -> y: f32[64]
    tasks t in 1 {
    store y[0 : +64] = (load x[0 : +64]) * (pos as f32);
}

step decode(x: f32[64], a: i32, b: i32) -> (y: f32[64]) {
    let p = position(a, b);
    let y = scaled(x, p);
    return (y);
}

// position's body, then scaled's: its first load is the scalar, which the product converts.
// CHECK-LABEL: {{^}}task.run{{[0-9]+}}:
// CHECK-LABEL: {{^}}task.run{{[0-9]+}}:
// CHECK-NEXT: [[POS:%[0-9]+]] = load i32, ptr addrspace(1)
// CHECK: sitofp i32 [[POS]] to float
