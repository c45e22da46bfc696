// Two configs that derive from each other.
config a : b {
  hidden = 64;
}

config b : a {
  hidden = 128;
}
