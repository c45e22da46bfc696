import util;
import bad;

config c { n = 8; }

weight w: f32[n] = "w";
const four = two * two;

step decode(pos: i32) -> (y: f32[n]) {
    let o = add_one(w);
    return o;
}
