package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/runtime/abi"
)

func TestVersionOutput(t *testing.T) {
	var out, errb bytes.Buffer
	if st := run([]string{"version"}, &Env{Stdout: &out, Stderr: &errb}); st != 0 {
		t.Fatalf("exit status %d, stderr %q", st, errb.String())
	}
	want := []string{
		"occa-tools version " + Version,
		fmt.Sprintf("ABI version %d (libocca_tools.so.1)", abi.Version),
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
