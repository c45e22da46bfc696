// mma and mma_nt (docs/language.md) on the scalar lowering every target shares today
// (backend/tile/mma.cpp): each operand is staged once into an f32 shared-memory tile (the bf16
// weights widened, the f32 activation rounded to bf16 by its cast), then every thread sums its
// outputs over k with one f32 fma a term in a loop. Also the program of the interpreter's
// end-to-end mma test (tests/e2e/tiny_llama_test.cpp), against a float64 reference. Shapes are
// deliberately not multiples of the fragment shapes (dim 40, toks 3): the scalar lowering takes any,
// and these never reach the matrix instruction (tests/codegen/mma_tensor.mk has the shapes that do).
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --stdlib %stdlib | %FileCheck %s --check-prefix=PTX
// RUN: %mkdsl build %s --emit=ptx --target sm_80 --stdlib %stdlib | %FileCheck %s --check-prefix=PTX
// RUN: %mkdsl build %s --emit=ptx --target sm_90a --stdlib %stdlib | %S/ptx_in_loop.sh 'fma\.rn\.f32' 'ld\.shared\.f32'
// RUN: %mkdsl build %s --emit=amdgcn --target gfx942 --stdlib %stdlib | %FileCheck %s --check-prefix=GCN
// RUN: %mkdsl build %s --emit=amdgcn --target gfx90a --stdlib %stdlib | %FileCheck %s --check-prefix=GCN
// RUN: %mkdsl build %s --emit=amdgcn --target gfx942 --stdlib %stdlib | %S/ptx_in_loop.sh 'v_fma(c)?_f32' 'ds_read'
// h = x v: a weight times a weight, E / R tasks of R columns each.
op up<T, D, E, R = 16>(x: bf16[T, D], v: bf16[D, E]) -> h: f32[T, E]
    tasks t in E / R {
    store h[0 : +T, t * R : +R] = mma(load x[0 : +T, 0 : +D], load v[0 : +D, t * R : +R]);
}

// y = h w^T: the activation h (rounded to bf16) times an [out, in] weight.
op down<T, E, N, R = 8>(h: f32[T, E], w: bf16[N, E]) -> y: f32[T, N]
    tasks t in N / R {
    store y[0 : +T, t * R : +R] = mma_nt((load h[0 : +T, 0 : +E]) as bf16, load w[t * R : +R, 0 : +E]);
}

config small {
    toks = 3;
    dim = 40;
    inner = 48;
    outs = 24;
}

weight x: bf16[toks, dim] = "x.weight";
weight v: bf16[dim, inner] = "v.weight";
weight w: bf16[outs, inner] = "w.weight";

step decode(token: i32) -> (y: f32[toks, outs]) {
    let h = up(x, v);
    let y = down(h, w);
    return (y);
}

// PTX-NOT: mma.sync
// PTX: cvt.rn.bf16.f32
// PTX: fma.rn.f32
// PTX-NOT: mma.sync
// GCN-NOT: v_mfma
// GCN: v_fma{{c?}}_f32
// GCN-NOT: v_mfma
