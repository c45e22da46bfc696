// A small model for the language server's tests.
import std.linear;

/// Sizes.
config small {
    /// Hidden size.
    hidden = 64;
    rows = 16;
}

/// A wider variant.
config wide : small {
    hidden = 128;
}

const chunk = hidden / 2;

/// The projection weight.
weight proj: bf16[hidden, hidden] tiled(rows, chunk) = "model.proj.weight";
/// The input vector.
weight xin: bf16[hidden] = "model.x.weight";

/// Per-layer gains.
group layer[l in 0 .. 2] {
    /// Gain of layer l.
    weight gain: bf16[hidden] = "model.layers.{l}.gain";
}

/// y = x * g, B elements per task.
op scale<N, B = 16>(x: bf16[N], g: bf16[N]) -> y: bf16[N]
    tasks t in N / B {
    let v = load x[t * B : +B] as f32;
    let w = load g[t * B : +B] as f32;
    store y[t * B : +B] = (v * w) as bf16;
}

fn block(w: layer, x: bf16[hidden]) -> bf16[hidden] {
    let h = matvec(proj, x);
    let s = scale(h, w.gain, B = 32);
    return s;
}

step decode(pos: i32) -> (y: bf16[hidden]) {
    var x: bf16[hidden] = matvec(proj, xin);
    for l in 0 .. 2 {
        x = block(layer[l], x);
    }
    return x;
}
