// std.sampling: argmax_final alone, on f32 and i32 tensor inputs of the step (no weights).
import std.sampling;

config small {
    parts = 32;
}

step pick(part_max: f32[parts], part_idx: i32[parts]) -> (next: i32) {
    let nx = argmax_final(part_max, part_idx);
    return (nx);
}
