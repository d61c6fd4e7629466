package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// install is where occa-prof's companion files are.
type install struct {
	preload string // LD_PRELOAD: lib/libocca_tools_occa.so:lib/libocca_tools_preload.so
	lib     string // the directory of the libraries
	config  string // the default config, "" when none was found
}

// locate finds the installed files relative to occa-prof's own executable:
// PREFIX/bin/occa-prof -> PREFIX/lib and PREFIX/share/occa-tools/configs;
// in the build tree build/bin/occa-prof -> build/lib, and configs/ at the
// root of the source tree (build/..).
func locate() (*install, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find my own executable: %v", err)
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	return locateFrom(filepath.Dir(exe))
}

func locateFrom(bin string) (*install, error) {
	lib := filepath.Join(bin, "..", "lib")
	// The OCCA adapter's hooks must come before libocca; the shim starts the
	// runtime in processes that contain libocca.
	in := &install{preload: filepath.Clean(filepath.Join(lib, "libocca_tools_occa.so")) + ":" +
		filepath.Clean(filepath.Join(lib, "libocca_tools_preload.so")), lib: filepath.Clean(lib)}
	for _, name := range []string{"libocca_tools_occa.so", "libocca_tools_preload.so", "libocca_tools.so.1", "libocca_tools_core.so"} {
		p := filepath.Join(lib, name)
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("broken installation: %s is missing (occa-prof looks for its libraries in %s)",
				filepath.Clean(p), filepath.Clean(lib))
		}
	}
	for _, c := range []string{
		filepath.Join(bin, "..", "share", "occa-tools", "configs", "default.toml"),
		filepath.Join(bin, "..", "..", "configs", "default.toml"), // build/bin -> configs/
	} {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			in.config = filepath.Clean(c)
			break
		}
	}
	return in, nil
}

// mpiPreload is LD_PRELOAD for --mpi: the PMPI library first (its MPI_*
// must come before libmpi's), then the usual ones.
func (in *install) mpiPreload() (string, error) {
	p := filepath.Join(in.lib, "libocca_tools_mpi.so")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("--mpi: %s is missing: this occa-tools was built without an MPI compiler; "+
			"install your MPI's development files (mpicc) and rebuild, or set MPICC=... for make", p)
	}
	return p + ":" + in.preload, nil
}

// findProgram resolves PROGRAM as a shell does: a name with a slash is a
// path, any other is looked up in PATH. The status is 127 when it is not
// found and 126 when it cannot be executed.
func findProgram(name string) (string, int, error) {
	path := name
	if !strings.ContainsRune(name, '/') {
		p, err := lookPath(name)
		if err != nil {
			return "", exitNotFound, fmt.Errorf("%s: command not found", name)
		}
		path = p
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", exitNotFound, fmt.Errorf("%s: no such file or directory", name)
	case err != nil:
		return "", exitNotExecable, fmt.Errorf("%s: %v", name, err)
	case st.IsDir():
		return "", exitNotExecable, fmt.Errorf("%s: is a directory", name)
	case st.Mode().Perm()&0o111 == 0:
		return "", exitNotExecable, fmt.Errorf("%s: permission denied", name)
	}
	return path, 0, nil
}

// lookPath searches PATH for an executable regular file called name.
func lookPath(name string) (string, error) {
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", os.ErrNotExist
}
