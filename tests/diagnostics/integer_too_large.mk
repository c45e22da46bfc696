// An integer literal that does not fit in 64 bits.
const big = 99999999999999999999;
