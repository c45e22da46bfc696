// A config that derives from a config that does not exist.
config small {
  hidden = 64;
}

config big : smal {
  hidden = 4096;
}
