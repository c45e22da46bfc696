// A compile-time product that does not fit in 64 bits.
const big = 4_000_000_000;
const bigger = big * big;
