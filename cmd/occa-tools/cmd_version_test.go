package main

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
)

// The ABI version printed by "occa-tools version" is the header's.
func TestVersionABIMatchesHeader(t *testing.T) {
	h, err := os.ReadFile("../../runtime/include/occa_tools.h")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^#define OCCA_TOOLS_ABI_VERSION (\d+)u?\s*$`).FindSubmatch(h)
	if m == nil {
		t.Fatal("occa_tools.h: no #define OCCA_TOOLS_ABI_VERSION")
	}
	if got := fmt.Sprint(abiVersion); got != string(m[1]) {
		t.Errorf("cmd/occa-tools abiVersion = %s, occa_tools.h says %s: update cmd_version.go", got, m[1])
	}
}

func TestVersionOutput(t *testing.T) {
	var out, errb bytes.Buffer
	if st := run([]string{"version"}, &Env{Stdout: &out, Stderr: &errb}); st != 0 {
		t.Fatalf("exit status %d, stderr %q", st, errb.String())
	}
	want := []string{
		"occa-tools version " + Version,
		fmt.Sprintf("ABI version %d (libocca_tools.so.1)", abiVersion),
		fmt.Sprintf("trace format version %d.%d", trace.FormatMajor, trace.FormatMinor),
	}
	lines := strings.Split(out.String(), "\n")
	for i, w := range want {
		if i >= len(lines) || lines[i] != w {
			t.Errorf("line %d: got %q, want %q\nfull output:\n%s", i+1, lines[min(i, len(lines)-1)], w, out.String())
		}
	}
	if st := run([]string{"version", "x"}, &Env{Stdout: &out, Stderr: &errb}); st != 2 {
		t.Errorf("version x: exit status %d, want 2", st)
	}
}
