// Half-typed code, for completion and signature help while editing.
import std.linear;
import std.

config c { n = 64; }

group layer[l in 0 .. 2] {
    /// Gain.
    weight g: bf16[n] = "g.{l}";
    state kv: bf16[n];
}

op copy<N, T: >(x: bf16[N]) -> y: bf16[N]
    tasks t in 1 {
    let v = load x[0 : +N] as 
    let m = max(v, 
}

@
step decode(pos: i32) -> (y: bf16[n]) {
    let a = layer[0].
    let b = matvec(
}
