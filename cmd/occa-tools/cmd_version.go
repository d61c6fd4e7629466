package main

import (
	"fmt"
	"runtime"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/runtime/abi"
)

// Version is the tool version, set at link time (-X main.Version=...; the
// Makefile passes `git describe`, or the VERSION file of a release tarball).
var Version = "dev"

// soname is the runtime library's SONAME; it changes only with an
// incompatible ABI (CONTRIBUTING.md, Versions).
const soname = "libocca_tools.so.1"

var cmdVersion = &Command{
	UsageLine: "version",
	Short:     "print the tool version, the ABI version and the trace format version",
	Long: `
Version prints, one per line: the occa-tools version (from git describe at
build time), the callback ABI version the runtime implements
(OCCA_TOOLS_ABI_VERSION in occa_tools.h) with the runtime library's SONAME,
the trace format version this release writes (major.minor; readers accept
any minor version of the same major), and the Go toolchain and platform.
`,
	Run: runVersion,
}

func runVersion(env *Env, cmd *Command, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	fmt.Fprintf(env.Stdout, "occa-tools version %s\n", Version)
	fmt.Fprintf(env.Stdout, "ABI version %d (%s)\n", abi.Version, soname)
	fmt.Fprintf(env.Stdout, "trace format version %d.%d\n", trace.FormatMajor, trace.FormatMinor)
	fmt.Fprintf(env.Stdout, "built with %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
