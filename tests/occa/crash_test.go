package occa

import (
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/libocca/occa-tools/tests/occatest"
)

// An OCCA program that dies (programs/crash.cpp: an uncaught
// occa::exception, abort(), a NULL store) after its launches: untraced,
// preloaded by hand and under occa-prof, it ends the same way, its trace is
// complete up to the crash, and occa-prof says it died and prints the
// launches. In OpenCL mode on POCL, POCL's LLVM has installed its crash
// handlers by then (the real case of the uncaught exception that left no
// trace); Serial gets LLVM-like ones from the program ("llvm").
func TestCrash(t *testing.T) {
	needOCCA2(t)
	config, _ := filepath.Abs("../../configs/default.toml")
	for _, m := range modes("Serial", "OpenCL", "CUDA") {
		for _, cc := range occatest.CrashCases {
			for _, llvm := range []bool{false, true} {
				if llvm && m[0] != "Serial" {
					continue
				}
				c := &occatest.Crash{Program: filepath.Join(bin, "crash"), Args: []string{m[1], okl, strconv.Itoa(launches), cc.How},
					Mode: m[0], Launches: launches, How: cc.How, Signal: cc.Signal, Build: filepath.Dir(filepath.Dir(occaProf)),
					Config: config, Env: []string{"OCCA_DIR=" + occaDir}}
				name := m[0] + "/" + cc.How
				if llvm {
					c.Args = append(c.Args, "llvm")
					name += "-llvm"
				}
				t.Run(name, func(t *testing.T) {
					skipMissing(t, m[0])
					c.Check(t)
				})
			}
		}
	}
}

// A kernel that stores through a null pointer (Serial runs it inside the
// launch): the trace is complete, the launch that crashed has a begin and
// no end, and occa-prof names it.
func TestCrashInKernel(t *testing.T) {
	needOCCA2(t)
	config, _ := filepath.Abs("../../configs/default.toml")
	c := &occatest.Crash{Program: filepath.Join(bin, "crash"), Args: []string{"Serial", okl, strconv.Itoa(launches), "kernel-segv"},
		Mode: "Serial", Launches: launches, How: "kernel-segv", Signal: syscall.SIGSEGV, Build: filepath.Dir(filepath.Dir(occaProf)),
		Config: config, Env: []string{"OCCA_DIR=" + occaDir}}
	c.Check(t)
}
