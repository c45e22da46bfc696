// Integer division by a compile-time zero.
const hidden = 64;
const heads = 0;
const head_dim = hidden / heads;
