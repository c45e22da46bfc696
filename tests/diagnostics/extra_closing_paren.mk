// A ')' with no matching '('.
const a = 1 + 2);
