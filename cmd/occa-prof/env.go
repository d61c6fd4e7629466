package main

import "strings"

// childEnv is env with the variables that make PROGRAM traced: the config,
// the output directory and the preload shim, put before the user's
// LD_PRELOAD (whose libraries keep their order after it).
//
// A program built with AddressSanitizer refuses to start when a library
// comes before ASan's runtime in the list of initial libraries ("ASan
// runtime does not come first", exit 1), which the preloaded shim does; so
// ASAN_OPTIONS gets verify_asan_link_order=0, unless the user set that
// option. The shim intercepts none of ASan's allocation functions, and
// passes what it does intercept on to ASan's. Other programs ignore it.
func childEnv(env []string, config, outDir, preload string) []string {
	out := make([]string, 0, len(env)+4)
	user, asan := "", ""
	for _, kv := range env {
		name, val, _ := strings.Cut(kv, "=")
		switch name {
		case "OCCA_TOOLS_CONFIG", "OCCA_TOOLS_OUTPUT_DIR":
			continue
		case "LD_PRELOAD":
			user = strings.TrimSpace(val)
			continue
		case "ASAN_OPTIONS":
			asan = val
			continue
		}
		out = append(out, kv)
	}
	pre := preload
	if user != "" {
		pre += ":" + user
	}
	if !strings.Contains(asan, "verify_asan_link_order") {
		asan = strings.TrimPrefix(asan+":verify_asan_link_order=0", ":")
	}
	return append(out, "ASAN_OPTIONS="+asan, "OCCA_TOOLS_CONFIG="+config, "OCCA_TOOLS_OUTPUT_DIR="+outDir, "LD_PRELOAD="+pre)
}

// mpiEnv is env with the MPI libraries added to those whose processes the
// shim traces (OCCA_TOOLS_TARGET_LIB, runtime/preload/preload.c): MPI
// programs without OCCA are traced, while mpirun, its daemons and compilers
// are not. Open MPI, Intel MPI and MVAPICH2 call theirs libmpi, MPICH
// libmpich, Cray MPICH libmpi_cray.
func mpiEnv(env []string) []string {
	const mpiLibs = "libmpi.so:libmpich.so:libmpi_cray.so"
	out := make([]string, 0, len(env)+1)
	targets := "libocca.so"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "OCCA_TOOLS_TARGET_LIB="); ok {
			if v = strings.TrimSpace(v); v != "" {
				targets = v
			}
			continue
		}
		out = append(out, kv)
	}
	return append(out, "OCCA_TOOLS_TARGET_LIB="+targets+":"+mpiLibs)
}
