// One config sets the same field twice.
config small {
  hidden = 64;
  layers = 2;
  hidden = 128;
}
