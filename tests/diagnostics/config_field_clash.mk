// A config field with the name of a top-level declaration.
config small {
  hidden = 64;
}

const hidden = 32;
