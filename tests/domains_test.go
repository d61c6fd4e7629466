package tests

import (
	"fmt"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
)

// The control API switches exactly the kinds of formats/trace/kinds.go:
// each domain its own kinds, each kind itself; the tool's domain and kinds,
// and numbers outside the enums, are refused (-1) and change nothing.
// control.c's domain table is generated from kinds.go (runtime/abi/gentables);
// this checks the runtime built from it.
func TestControlDomainsAndKinds(t *testing.T) {
	r := runProgram(t, "domains", "[events]\nenable = [\"all\"]\ndevice_time = true\n", nil)
	if r.err != nil {
		t.Fatalf("domains: %v\n%s", r.err, r.stderr)
	}
	kinds := trace.EventKinds()
	count := int(kinds[len(kinds)-1]) + 1
	want := []string{"off at start 0x0000000000000000"}
	line := func(what string, n int, ok bool, off uint64) string {
		if !ok {
			return fmt.Sprintf("%s %d rc -1 0x%016x rc -1 0x%016x", what, n, 0, 0)
		}
		return fmt.Sprintf("%s %d rc 0 0x%016x rc 0 0x%016x", what, n, off, 0)
	}
	for _, d := range trace.Domains() {
		var off uint64
		for _, k := range kinds {
			if k.Spec().Domain == d {
				off |= 1 << k
			}
		}
		want = append(want, line("domain", int(d), d != trace.DomainTool, off))
	}
	for k := 0; k <= count; k++ {
		ok := k > 0 && k < count && trace.Kind(k).Spec().Domain != trace.DomainTool
		want = append(want, line("event", k, ok, 1<<k))
	}
	want = append(want, fmt.Sprintf("domain %d rc -1", len(trace.Domains())))
	if got := lines(r.stdout); strings.Join(got, "\n") != strings.Join(want, "\n") {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("line %d: runtime says %q, kinds.go %q", i+1, got[i], want[i])
			}
		}
		t.Fatalf("runtime printed %d lines, want %d:\n%s", len(got), len(want), r.stdout)
	}
}
