// Helper for imported_config.mk: a module with a config.
config inner {
  hidden = 64;
}
