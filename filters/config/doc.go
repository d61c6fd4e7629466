// Package config reads occa-tools configuration files: TOML, laid over the
// defaults in configs/default.toml, strictly checked. Every error names the
// file, line and key and says what is allowed; all errors are collected
// (Errors, sorted by line) and Parse still returns a usable config in which
// every key with an error keeps its default. Load reads only regular files,
// and Parse refuses text past its limits (MaxSize, MaxDepth, MaxKeyPath,
// MaxString) before parsing it, so that no file can block the reader or cost
// it time and memory out of proportion to a config. The helpers ParseSize,
// ParseLevel, ParseSignal, ValidateName and ExpandName are also used by the
// runtime. ../README.md describes the choices made.
package config
