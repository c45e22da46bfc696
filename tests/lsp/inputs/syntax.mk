config small { hidden = 64; }

const x = (1 + 2;
const y = hidden * 2;
