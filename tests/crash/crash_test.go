// Package crash checks what a traced OCCA program leaves when it dies the
// ways OCCA programs die: an uncaught occa::exception (std::terminate,
// abort(), SIGABRT), abort(), a store through a null pointer (SIGSEGV), each
// also with LLVM-like crash handlers installed, as POCL (OCCA's OpenCL mode)
// has them. The program (tests/occa/programs/crash.cpp) runs against the
// stand-in libocca (tests/occa-standin) untraced, with the runtime preloaded
// by hand, linked against the runtime, and under occa-prof (occatest.Crash). tests/occa runs the same
// program against a real OCCA.
package crash

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/libocca/occa-tools/tests/occatest"
)

var (
	buildDir string
	program  string // crash.cpp built against the stand-in
	linked   string // the same, linked against libocca_tools too
	okl      string // the stand-in's addVectors.okl
	config   string // configs/default.toml
)

func TestMain(m *testing.M) {
	buildDir = os.Getenv("OCCA_TOOLS_BUILD")
	if buildDir == "" {
		buildDir, _ = filepath.Abs("../../build")
	}
	standin := filepath.Join(buildDir, "standin")
	okl = filepath.Join(standin, "addVectors.okl")
	config, _ = filepath.Abs("../../configs/default.toml")
	for _, need := range []string{filepath.Join(buildDir, "bin", "occa-prof"), okl, filepath.Join(standin, "lib", "libocca.so"),
		filepath.Join(buildDir, "lib", "libocca_tools_occa.so"), filepath.Join(buildDir, "lib", "libocca_tools_preload.so")} {
		if _, err := os.Stat(need); err != nil {
			if os.Getenv("CI") != "" {
				fmt.Fprintf(os.Stderr, "tests/crash: %s is missing: run `make all test-programs` first\n", need)
				os.Exit(1)
			}
			fmt.Fprintf(os.Stderr, "tests/crash: skipped: %s is missing (run `make all test-programs`)\n", need)
			os.Exit(0)
		}
	}
	bin, err := os.MkdirTemp("", "occa-crash-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests/crash:", err)
		os.Exit(1)
	}
	program, linked = filepath.Join(bin, "crash"), filepath.Join(bin, "crash-linked")
	lib, rt := filepath.Join(standin, "lib"), filepath.Join(buildDir, "lib")
	cxx := os.Getenv("CXX")
	if cxx == "" {
		cxx = "c++"
	}
	compile := []string{"-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-I../occa-standin/include",
		"../occa/programs/crash.cpp", "-L" + lib, "-locca", "-Wl,-rpath," + lib}
	for _, args := range [][]string{
		append(compile, "-o", program),
		append(compile, "-o", linked, "-L"+rt, "-Wl,--no-as-needed", "-locca_tools", "-Wl,--as-needed", "-Wl,-rpath,"+rt),
	} {
		if out, err := exec.Command(cxx, args...).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "tests/crash: building crash.cpp: %v\n%s", err, out)
			os.RemoveAll(bin)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(bin)
	os.Exit(code)
}

// Each way to die, with and without LLVM-like handlers: the traced program
// ends as the untraced one, and its trace is complete up to the crash.
// Before the runtime exported abort() and chained a fault handler behind
// the Go runtime's, "segv" (both) and "throw llvm", "abort llvm" left
// traces without their final stats and without any event.
func TestCrashes(t *testing.T) {
	const launches = 6
	for _, cc := range occatest.CrashCases {
		for _, llvm := range []bool{false, true} {
			c := &occatest.Crash{Program: program, Linked: linked, Args: []string{"Serial", okl, strconv.Itoa(launches), cc.How},
				Mode: "Serial", Launches: launches, How: cc.How, Signal: cc.Signal, Build: buildDir, Config: config}
			name := cc.How
			if llvm {
				c.Args = append(c.Args, "llvm")
				name += "-llvm"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				c.Check(t)
			})
		}
	}
}
