package install_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// makeAt runs make in the repository root with env (on top of the test's
// environment, less CC and CXX) and returns its output; a hang fails the
// test at its deadline.
func makeAt(t *testing.T, env []string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", append([]string{"--no-print-directory", "-C", "../.."}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CC=") && !strings.HasPrefix(kv, "CXX=") && !strings.HasPrefix(kv, "MAKEFLAGS=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// The C++ compiler is c++ unless CXX is given: make predefines CXX=g++,
// which `CXX ?= c++` would have kept.
func TestMakefileCXX(t *testing.T) {
	show := []string{"-s", "--eval=show-cxx-for-test: ; @echo '$(CXX)'", "show-cxx-for-test"}
	if got := strings.TrimSpace(makeAt(t, nil, show...)); got != "c++" {
		t.Errorf("with no CXX, make uses %q, want c++", got)
	}
	if got := strings.TrimSpace(makeAt(t, []string{"CXX=clang++"}, show...)); got != "clang++" {
		t.Errorf("with CXX=clang++ in the environment, make uses %q", got)
	}
}

// occa-tools.pc's Version is numeric, so `pkg-config --atleast-version`
// compares numbers: a leading v or a commit name sorts below every release.
func TestPkgConfigVersionNumeric(t *testing.T) {
	build := t.TempDir()
	for version, want := range map[string]string{
		"v0.1.0":                   "0.1.0",
		"v1.12.3-4-g1a112f2-dirty": "1.12.3",
		"0.2.0":                    "0.2.0",
		"1a112f2":                  "0.0.0",
		"dev":                      "0.0.0",
	} {
		makeAt(t, nil, "-s", "BUILD="+build, "VERSION="+version, build+"/packaging/occa-tools.pc")
		pc := read(t, filepath.Join(build, "packaging", "occa-tools.pc"))
		if !strings.Contains(pc, "\nVersion: "+want+"\n") {
			t.Errorf("VERSION=%s: want Version: %s in occa-tools.pc:\n%s", version, want, pc)
		}
	}
}

// make install builds what it installs and nothing else: not the test
// programs (the stand-in libocca, the OpenMP programs built with clang),
// which a package build (Spack's) would build with a compiler it did not
// choose, for nothing.
func TestInstallBuildsOnlyWhatItInstalls(t *testing.T) {
	dir := t.TempDir()
	out := makeAt(t, nil, "-n", "BUILD="+dir+"/build", "PREFIX="+dir+"/prefix", "install")
	for _, want := range []string{"tests/workload/workload.c", "libocca_tools_occa.so", "libocca_tools_preload.so",
		"./runtime/core", "./cmd/occa-tools", "occa-tools.pc"} {
		if !strings.Contains(out, want) {
			t.Errorf("make -n install does not build %s:\n%s", want, out)
		}
	}
	for _, unwanted := range []string{"occa-standin", "tests/openmp", "-fopenmp"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("make -n install builds a test program (%s):\n%s", unwanted, out)
		}
	}
}
