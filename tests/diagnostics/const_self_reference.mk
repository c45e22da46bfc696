// A constant defined in terms of itself.
const n = n + 1;
