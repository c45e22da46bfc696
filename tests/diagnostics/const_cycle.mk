// Two constants defined in terms of each other.
const a = b + 1;
const b = a * 2;
