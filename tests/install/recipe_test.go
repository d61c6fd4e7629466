// Package install_test checks that the Spack recipe in spack/ agrees with
// the project: the Go bound with go.mod, the release versions with the git
// tags, the variant with the Makefile. The install and dist checks
// themselves are in check.sh (make test-install).
package install_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const (
	recipePath = "../../spack/spack_repo/occa_tools/packages/occa_tools/package.py"
	repoYAML   = "../../spack/spack_repo/occa_tools/repo.yaml"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The recipe's go@ bound is go.mod's go line (major.minor): Spack builds
// with GOTOOLCHAIN=local, so an older Go would refuse the module.
func TestRecipeGoBound(t *testing.T) {
	mod := regexp.MustCompile(`(?m)^go (\d+)\.(\d+)(\.\d+)?\s*$`).FindStringSubmatch(read(t, "../../go.mod"))
	if mod == nil {
		t.Fatal("go.mod has no go line")
	}
	want := mod[1] + "." + mod[2]
	bounds := regexp.MustCompile(`depends_on\("go@([0-9.]+):"(.*)\)`).FindAllStringSubmatch(read(t, recipePath), -1)
	if len(bounds) != 1 {
		t.Fatalf("want exactly one depends_on(\"go@X.Y:\") in the recipe, found %d", len(bounds))
	}
	if bounds[0][1] != want || !strings.Contains(bounds[0][2], `type="build"`) {
		t.Errorf("recipe has depends_on(\"go@%s:\"%s), go.mod says go %s: want depends_on(\"go@%s:\", type=\"build\")",
			bounds[0][1], bounds[0][2], mod[0][3:], want)
	}
}

// Every vX.Y.Z tag has a version line with a sha256, and every version
// line has its tag (checked only in a git checkout).
func TestRecipeVersionsMatchTags(t *testing.T) {
	recipe := read(t, recipePath)
	var versions []string
	for _, m := range regexp.MustCompile(`(?m)^    version\("([^"]+)",\s*(.*)\)`).FindAllStringSubmatch(recipe, -1) {
		if m[1] == "develop" {
			if !strings.Contains(m[2], `branch="main"`) {
				t.Errorf("version(\"develop\") should track branch main: %s", m[0])
			}
			continue
		}
		if !regexp.MustCompile(`^sha256="[0-9a-f]{64}"$`).MatchString(m[2]) {
			t.Errorf("release %s has no sha256 of its make dist tarball: %s", m[1], m[0])
		}
		versions = append(versions, m[1])
	}
	if !strings.Contains(recipe, `version("develop", branch="main")`) {
		t.Error(`the recipe lacks version("develop", branch="main")`)
	}
	out, err := exec.Command("git", "-C", "../..", "tag", "--list", "v[0-9]*.[0-9]*.[0-9]*").Output()
	if err != nil {
		t.Skipf("no git checkout (%v): tags not compared", err)
	}
	tags := strings.Fields(string(out))
	for _, tag := range tags {
		if !slices.Contains(versions, strings.TrimPrefix(tag, "v")) {
			t.Errorf("tag %s has no version line in the recipe: run `make dist spack-version` on the tag and add the line", tag)
		}
	}
	for _, v := range versions {
		if !slices.Contains(tags, "v"+v) {
			t.Errorf("the recipe lists version %s but there is no tag v%s", v, v)
		}
	}
}

// The recipe's url names the tarball make dist writes, its +occa variant
// tests capture of a real OCCA program (the adapter itself builds without
// OCCA), and it declares what the issue asks of a GoPackage with cgo.
func TestRecipeMatchesMakefile(t *testing.T) {
	recipe, makefile := read(t, recipePath), read(t, "../../Makefile")
	for _, want := range []string{
		`from spack_repo.builtin.build_systems.go import GoPackage`,
		`class OccaTools(GoPackage):`,
		`depends_on("c", type="build")`,
		// The OCCA adapter is C++: without this Spack's wrapper refuses
		// the C++ compiler and the build fails.
		`depends_on("cxx", type="build")`,
		`depends_on("gmake", type="build")`,
		// The build builds what install copies, nothing else (the
		// test programs want clang and the stand-in libocca).
		`make("all", "workload", *self._make_args())`,
		`extra_env=self._go_env()`,
		`variant(` + "\n" + `        "occa",`,
		`depends_on("occa", when="+occa")`,
		`def test_occa_capture(self)`,
		`libocca_tools_occa.so`,
		`def libs(self)`,
		`def headers(self)`,
		`def test_version(self)`,
		`occa-tools-workload`,
	} {
		if !strings.Contains(recipe, want) {
			t.Errorf("recipe lacks %q", want)
		}
	}
	for _, want := range []string{"share/occa-tools/examples/occa", "bin/occa-tools-workload", "DIST_NAME    = occa-tools-$(patsubst v%,%,$(DIST_VERSION))"} {
		if !strings.Contains(makefile, want) {
			t.Errorf("Makefile lacks %q, which the recipe relies on", want)
		}
	}
	url := regexp.MustCompile(`(?m)^    url = "(.*)"`).FindStringSubmatch(recipe)
	if url == nil || !regexp.MustCompile(`/v(\d+\.\d+\.\d+)/occa-tools-(\d+\.\d+\.\d+)\.tar\.gz$`).MatchString(url[1]) {
		t.Errorf("recipe url %v does not name a make dist tarball (.../vX.Y.Z/occa-tools-X.Y.Z.tar.gz)", url)
	}
	// Spack's stand-alone tests use the installed sample configs.
	if _, err := os.Stat("../../configs/default.toml"); err != nil {
		t.Error(err)
	}
}

// Spack 1.x repository layout: spack_repo/<namespace>/repo.yaml with the
// namespace and an api version, packages/<name with underscores>/.
func TestRepoLayout(t *testing.T) {
	y := read(t, repoYAML)
	if !strings.Contains(y, "namespace: occa_tools") || !regexp.MustCompile(`(?m)^  api: v2\.\d+$`).MatchString(y) {
		t.Errorf("%s: want namespace occa_tools and api v2.x:\n%s", repoYAML, y)
	}
	if filepath.Base(filepath.Dir(filepath.Dir(repoYAML))) != "spack_repo" {
		t.Errorf("%s is not under spack_repo/", repoYAML)
	}
}
