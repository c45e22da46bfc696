// A derived config may only override fields of its base.
config small {
  hidden = 64;
  layers = 2;
}

config big : small {
  hidden = 4096;
  heads = 32;
}
