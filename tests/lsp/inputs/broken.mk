import std.linear;
import std.linear;

config small { hidden = 64; }

weight proj: bf16[hidden, hidden] tiled(16, 32) = "model.proj.weight";
weight xin: bf16[32] = "model.x.weight";

step decode(pos: i32) -> (y: bf16[hidden]) {
    let h = matvec(proj, xin);
    return hiden;
}
