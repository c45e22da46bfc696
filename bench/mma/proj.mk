// The matrix product alone, at the shapes of a prefill's projections (scripts/bench_mma.py):
// y = x w^T for T tokens, as a prefill's projection computes it: x[T, K] bf16 activations in global
// memory (row-major, written by the op before: here `rows_of`, a copy of a weight), w[N, K] a bf16
// weight streamed through the weight ring as whole tiles, y stored as bf16. Each task computes one
// M x R tile of y over K in chunks of C, on the matrix instruction, its accumulators in registers
// for the whole K loop (backend/tile/mma.cpp). The step is decode-shaped so that mkrt-run can drive
// and time it: `touch` gives it a token and a position, and `check` reduces y to the T-vector
// y v (v a bf16 weight), which the benchmark compares with torch's x w^T v.
op touch<T, K, S>(x: bf16[T, K], token: i32, pos: i32, seen: inout f32[S, 16]) -> ()
    tasks t in 1 {
    store seen[pos, 0 : +16] = (load x[token, 0 : +16]) as f32;
}

op rows_of<T, K, R = 4>(xw: bf16[T, K]) -> x: bf16[T, K]
    tasks t in T / R {
    store x[t * R : +R, 0 : +K] = load xw[t * R : +R, 0 : +K];
}

op proj<T, K, N, M = 64, R = 64, C = 64>(x: bf16[T, K], w: bf16[N, K] tiled(R, C)) -> y: bf16[T, N]
    tasks i in T / M, j in N / R {
    var acc: f32[M, R];
    for k in 0 .. K by C {
        acc += mma_nt(load x[i * M : +M, k : +C], load w[j * R : +R, k : +C]);
    }
    store y[i * M : +M, j * R : +R] = acc as bf16;
}

op check<T, N, R = 4, C = 1024>(y: bf16[T, N], v: bf16[N]) -> l: f32[T]
    tasks t in T / R {
    var acc: f32[R];
    for c in 0 .. N by C {
        acc += rowdot(load y[t * R : +R, c : +C], load v[c : +C]);
    }
    store l[t * R : +R] = acc;
}

// Llama-3.2-1B's projections for a 512-token prompt: fused q/k/v, o, fused gate/up, down. Tiles:
// rows x cols of y per task, K chunks of `chunk`.
config qkv {
    rows = 64;
    cols = 64;
    chunk = 64;
    tokens = 512;
    k = 2048;
    n = 3072;
}

config o {
    rows = 64;
    cols = 64;
    chunk = 64;
    tokens = 512;
    k = 2048;
    n = 2048;
}

config gate_up {
    rows = 64;
    cols = 64;
    chunk = 64;
    tokens = 512;
    k = 2048;
    n = 16384;
}

config down {
    rows = 64;
    cols = 64;
    chunk = 64;
    tokens = 512;
    k = 8192;
    n = 2048;
}

weight xw: bf16[tokens, k] = "x";
weight w: bf16[n, k] tiled(cols, chunk) = "w";
weight v: bf16[n] = "v";
state seen: f32[1024, 16];

step decode(token: i32, pos: i32) -> (logits: f32[tokens]) {
    touch(xw, token, pos, seen);
    let x = rows_of(xw);
    let y = proj(x, w, M = rows, R = cols, C = chunk);
    let logits = check(y, v);
    return (logits);
}
