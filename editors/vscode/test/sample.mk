/// A doc comment with `code`.
// A line comment.
/* A block
   comment. */
import std.linear;

config tiny : base { hidden = 64; rms_eps = 1e-5; theta = 500_000.0; }
const groups = heads / kv_heads;
weight w: bf16[hidden, hidden] tiled(16, 64) = "model.layers.{l}.weight\n";
state cache: f16[4, 8] col_major;
group layer[l in 0 .. layers] { state s: f32[8] padded(16); }

@cluster(2)
op scale<N, K = 64>(x: inout f32[N], y: i32) -> z: bool[N] tasks t in N / K {
    static_assert(N % K == 0, "K divides N");
    let v = load x[t * K : +K] as f32;
    var m: f32 = -inf;
    for k in 0..K by 8 { m = max(m, exp(v)); }
    if true && !false { store z[t] = v >= 1.5; } else { return; }
}

step decode(token: i32) -> i32 {
    @after(x) let y = matvec(w, x);
    sync grid;
    return argmax(y);
}
