// Two top-level constants with the same name.
const hidden = 64;
const layers = 2;
const hidden = 128;
