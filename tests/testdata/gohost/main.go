// Command gohost is a Go program that records through the runtime's C API
// with cgo, as a Go program using OCCA would (tests/endings_test.go). Go
// ends a process with the exit_group system call, not the C library's
// exit. It records 1000 user regions, then ends as its argument says:
//
//	exit        os.Exit(0)
//	return      main returns
//	flush-exit  occa_tools_flush(), then os.Exit(0)
//
// Regions are per thread, and Go moves a goroutine between threads between
// two cgo calls (under load, a push on one thread and its pop on another,
// which has no region open: 1999 events of 2000): main keeps its thread,
// as a Go program calling a thread-bound C API must.
//
// The Makefile builds it (build/tests/gohost) against build/lib; it lies
// under testdata so that `go build ./...` leaves it out.
package main

/*
#include <stdlib.h>
#include "occa_tools.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"
)

func init() { runtime.LockOSThread() }

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gohost exit|return|flush-exit")
		os.Exit(2)
	}
	how := os.Args[1]
	name := C.CString("step")
	defer C.free(unsafe.Pointer(name))
	for range 1000 {
		C.occa_tools_region_push(name)
		C.occa_tools_region_pop()
	}
	fmt.Printf("gohost: %s\n", how)
	switch how {
	case "exit":
		os.Exit(0)
	case "flush-exit":
		C.occa_tools_flush()
		os.Exit(0)
	}
}
