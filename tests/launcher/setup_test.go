// Package launcher tests the preload shim (runtime/preload) and occa-prof
// (cmd/occa-prof) end to end on the real runtime libraries. They need
// `make all test-programs` (OCCA_TOOLS_BUILD points at another build
// directory); what the build directory lacks (the shim, occa-prof) they
// build themselves into an installed-like tree: bin/, lib/, share/.
package launcher

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

var (
	buildDir string // the project's build directory
	root     string // the installed-like tree: bin/occa-prof, lib/, share/
	occaProf string // root/bin/occa-prof
	shim     string // root/lib/libocca_tools_preload.so
	app      string // a program linking the stand-in libocca.so
	workload string // build/tests/workload
	repo     string // the repository root
)

func TestMain(m *testing.M) {
	if runtime.GOOS != "linux" {
		fmt.Fprintln(os.Stderr, "launcher: skipped: Linux only")
		os.Exit(0)
	}
	repo, _ = filepath.Abs("../..")
	buildDir = os.Getenv("OCCA_TOOLS_BUILD")
	if buildDir == "" {
		buildDir = filepath.Join(repo, "build")
	}
	workload = filepath.Join(buildDir, "tests", "workload")
	for _, need := range []string{workload, filepath.Join(buildDir, "lib", "libocca_tools.so.1"),
		filepath.Join(buildDir, "lib", "libocca_tools_core.so")} {
		if _, err := os.Stat(need); err != nil {
			if os.Getenv("CI") != "" {
				fmt.Fprintf(os.Stderr, "launcher: %s is missing: run `make all test-programs` first\n", need)
				os.Exit(1)
			}
			fmt.Fprintf(os.Stderr, "launcher: skipped: %s is missing (run `make all test-programs`)\n", need)
			os.Exit(0)
		}
	}
	var err error
	root, err = os.MkdirTemp("", "occa-prof-test-")
	if err == nil {
		err = setup()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "launcher: setup:", err)
		os.RemoveAll(root)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(root)
	os.Exit(code)
}

func sh(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %v: %v\n%s", name, args, err, out)
	}
	return nil
}

func setup() error {
	bin, lib := filepath.Join(root, "bin"), filepath.Join(root, "lib")
	cfgs := filepath.Join(root, "share", "occa-tools", "configs")
	for _, d := range []string{bin, lib, cfgs, filepath.Join(root, "app")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	for _, name := range []string{"libocca_tools.so.1", "libocca_tools_core.so"} {
		if err := os.Symlink(filepath.Join(buildDir, "lib", name), filepath.Join(lib, name)); err != nil {
			return err
		}
	}
	shim = filepath.Join(lib, "libocca_tools_preload.so")
	if built := filepath.Join(buildDir, "lib", "libocca_tools_preload.so"); exists(built) {
		if err := os.Symlink(built, shim); err != nil {
			return err
		}
	} else if err := sh(repo, ccName(), "-O2", "-std=c11", "-fPIC", "-fvisibility=hidden", "-Wall", "-Wextra",
		"-Werror", "-shared", "-Wl,-soname,libocca_tools_preload.so", "-o", shim, "runtime/preload/preload.c", "-ldl"); err != nil {
		return err
	}
	adapter := filepath.Join(lib, "libocca_tools_occa.so")
	if built := filepath.Join(buildDir, "lib", "libocca_tools_occa.so"); exists(built) {
		if err := os.Symlink(built, adapter); err != nil {
			return err
		}
	} else {
		srcs, _ := filepath.Glob(filepath.Join(repo, "runtime", "occa", "*.cpp"))
		args := append([]string{"-O2", "-std=c++17", "-fPIC", "-fvisibility=hidden", "-fvisibility-inlines-hidden",
			"-Iruntime/include", "-Iruntime/occa", "-shared", "-Wl,-soname,libocca_tools_occa.so",
			"-Wl,--version-script=runtime/occa/exports.map", "-o", adapter}, srcs...)
		if err := sh(repo, cxxName(), append(args, "-ldl", "-lpthread")...); err != nil {
			return err
		}
	}
	text, err := os.ReadFile(filepath.Join(repo, "configs", "default.toml"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cfgs, "default.toml"), text, 0o644); err != nil {
		return err
	}
	occaProf = filepath.Join(bin, "occa-prof")
	build := exec.Command("go", "build", "-o", occaProf, "./cmd/occa-prof")
	build.Dir = repo
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/occa-prof: %v\n%s", err, out)
	}
	appDir := filepath.Join(root, "app")
	src := filepath.Join(repo, "tests", "launcher", "testdata")
	if err := sh(appDir, ccName(), "-shared", "-fPIC", "-Wl,-soname,libocca.so", "-o", "libocca.so",
		filepath.Join(src, "occa_standin.c")); err != nil {
		return err
	}
	app = filepath.Join(appDir, "occa-app")
	return sh(appDir, ccName(), "-o", app, filepath.Join(src, "app.c"), "-L.", "-locca", "-Wl,-rpath,"+appDir)
}

func ccName() string {
	if cc := os.Getenv("CC"); cc != "" {
		return cc
	}
	return "cc"
}

func cxxName() string {
	if cxx := os.Getenv("CXX"); cxx != "" {
		return cxx
	}
	return "c++"
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// traces lists the trace files in dir.
func traces(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.occatrace"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
