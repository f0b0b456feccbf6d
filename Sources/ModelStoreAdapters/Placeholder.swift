// Registers the built-in adapters; written by the configuration issue.
