// Package abi holds the version of the callback ABI between event sources
// and the runtime (runtime/include/occa_tools.h). The header's
// OCCA_TOOLS_ABI_VERSION is generated from it (gentables), the runtime's Go
// core writes it into every trace header, and `occa-tools version` prints it.
package abi

//go:generate go run ./gentables ../..

// Version is the date (YYYYMMDD) of the last change to the contract of
// occa_tools.h: a new kind, entry point or rule. A tool accepts sources built
// against the same or an older version. Change it here, then run
// `make generate`.
const Version = 20261123
