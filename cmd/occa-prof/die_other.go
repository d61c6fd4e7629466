//go:build !linux

package main

import (
	"os"
	"syscall"
)

// dieOf exits with 128+sig, as a shell reports a death by signal.
func dieOf(sig syscall.Signal) {
	os.Exit(128 + int(sig))
}
