package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/runtime/abi"
)

const root = "../../.."

// TestGenerated fails when a header's generated blocks are not what
// formats/trace/kinds.go and runtime/abi/abi.go make now.
func TestGenerated(t *testing.T) {
	if err := Check(root); err != nil {
		t.Fatal(err)
	}
}

// copyTargets copies the targets into a new directory laid out as the
// repository and returns it.
func copyTargets(t *testing.T) string {
	dir := t.TempDir()
	for _, tg := range targets {
		data, err := os.ReadFile(filepath.Join(root, tg.path))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, tg.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// edit replaces old, which must occur once, by new in the file at path under dir.
func edit(t *testing.T, dir, path, old, new string) {
	t.Helper()
	p := filepath.Join(dir, path)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte(old)); n != 1 {
		t.Fatalf("%s holds %q %d times, want once", path, old, n)
	}
	if err := os.WriteFile(p, bytes.Replace(data, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A hand edit inside a block is reported with the file, the line and the
// command that fixes it; Write fixes it; edits outside blocks are kept.
func TestStaleBlockReported(t *testing.T) {
	dir := copyTargets(t)
	const hdr = "runtime/include/occa_tools.h"
	edit(t, dir, hdr, "OCCA_TOOLS_EVENT_FORK = 25,", "OCCA_TOOLS_EVENT_FORK = 26,")
	edit(t, dir, hdr, "#endif /* OCCA_TOOLS_H */", "/* kept */\n#endif /* OCCA_TOOLS_H */")
	edit(t, dir, "runtime/src/ot_internal.h", "#define OT_DEF_THREAD 70u\n", "")

	err := Check(dir)
	if err == nil {
		t.Fatal("Check passed on edited blocks")
	}
	orig, _ := os.ReadFile(filepath.Join(root, hdr))
	forkLine := 1 + bytes.Count(orig[:bytes.Index(orig, []byte("OCCA_TOOLS_EVENT_FORK = 25,"))], []byte("\n"))
	want := []string{
		fmt.Sprintf("%s:%d: stale generated block", hdr, forkLine),
		"runtime/src/ot_internal.h:",
		"run " + Regenerate,
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Check's error lacks %q:\n%v", w, err)
		}
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != 2 {
		t.Errorf("Check reported %d files, want 2:\n%v", n, err)
	}

	changed, err := Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(changed) != 2 {
		t.Errorf("Write changed %v, want both headers", changed)
	}
	if err := Check(dir); err != nil {
		t.Fatalf("Check after Write: %v", err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, hdr))
	if want := bytes.Replace(orig, []byte("#endif /* OCCA_TOOLS_H */"), []byte("/* kept */\n#endif /* OCCA_TOOLS_H */"), 1); !bytes.Equal(got, want) {
		t.Errorf("Write did not restore the block and keep the hand-written edit:\n%s", got)
	}
	if changed, err := Write(dir); err != nil || len(changed) != 0 {
		t.Errorf("second Write changed %v (err %v), want nothing", changed, err)
	}
}

// Broken markers are errors naming the file and line, never a guess.
func TestMarkerErrors(t *testing.T) {
	const hdr = "runtime/src/ot_internal.h"
	const begin = "/* BEGIN GENERATED tables:"
	const end = "/* END GENERATED tables */\n"
	const last = "#endif /* OT_INTERNAL_H */"
	for _, c := range []struct {
		name  string
		edits []string // old, new, old, new...
		want  string
	}{
		{"no end", []string{end, ""}, `generated block "tables" has no line "/* END GENERATED tables */" after it`},
		{"no block", []string{begin, "/* gone:", end, ""}, `runtime/src/ot_internal.h: no generated block "tables"`},
		{"unknown", []string{begin, "/* BEGIN GENERATED other:"}, `unknown generated block "other"`},
		{"stray end", []string{last, end + last}, "END GENERATED without its BEGIN GENERATED line"},
		{"twice", []string{last, begin + " */\n" + end + last}, `generated block "tables" appears twice`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyTargets(t)
			for i := 0; i < len(c.edits); i += 2 {
				edit(t, dir, hdr, c.edits[i], c.edits[i+1])
			}
			_, err := Files(dir)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), hdr) {
				t.Errorf("Files: %v, want an error starting %s and saying %q", err, hdr, c.want)
			}
		})
	}
}

// TestCValues compiles the headers and checks that C sees every number of
// formats/trace and runtime/abi, and that the domains split the event kinds.
func TestCValues(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc):", err)
	}
	var prog, want bytes.Buffer
	prog.WriteString("#include <stdio.h>\n#include \"occa_tools.h\"\n#include \"ot_internal.h\"\n" +
		"static const unsigned long long domain_kinds[OCCA_TOOLS_DOMAIN_COUNT] = OT_DOMAIN_KINDS;\n" +
		"int main(void) {\n")
	val := func(name string, v uint64) {
		fmt.Fprintf(&prog, "  printf(\"%s %%llu\\n\", (unsigned long long)(%s));\n", name, name)
		fmt.Fprintf(&want, "%s %d\n", name, v)
	}
	val("OCCA_TOOLS_ABI_VERSION", abi.Version)
	val("OT_MAX_ARGS", trace.MaxArgs)
	val("OT_DROP_COUNTERS", trace.NumReasonCounters)
	masks := make([]uint64, len(trace.Domains()))
	var all uint64
	for _, k := range trace.EventKinds() {
		val(cName("OCCA_TOOLS_EVENT_", k.String()), uint64(k))
		if all&(1<<k) != 0 {
			t.Fatalf("kind %d listed twice", k)
		}
		all |= 1 << k
		masks[k.Spec().Domain] |= 1 << k
	}
	kinds := trace.EventKinds()
	val("OCCA_TOOLS_EVENT_KIND_COUNT", uint64(kinds[len(kinds)-1])+1)
	for _, d := range trace.Domains() {
		val(cName("OCCA_TOOLS_DOMAIN_", d.String()), uint64(d))
		fmt.Fprintf(&prog, "  printf(\"mask %s %%llu\\n\", domain_kinds[%d]);\n", d, d)
		fmt.Fprintf(&want, "mask %s %d\n", d, masks[d])
	}
	val("OCCA_TOOLS_DOMAIN_COUNT", uint64(len(trace.Domains())))
	for k := trace.DefString; k.IsDef(); k++ {
		val(cName("OT_", k.String()), uint64(k))
	}
	for r := uint64(1); trace.DropReasonName(r) != "unknown"; r++ {
		val(cName("OT_DROP_", trace.DropReasonName(r)), r)
	}
	for a := uint64(1); trace.TriggerActionName(a) != ""; a++ {
		val(cName("OT_TRIGGER_", trace.TriggerActionName(a)), a)
	}
	for c := uint64(1); trace.TriggerCauseName(c) != ""; c++ {
		val(cName("OT_CAUSE_", trace.TriggerCauseName(c)), c)
	}
	for f := uint64(1); trace.MpiFunctionName(f) != ""; f++ {
		val(cName("OT_MPI_", trace.MpiFunctionName(f)), f)
	}
	prog.WriteString("  return 0;\n}\n")
	// The masks together are every event kind: none left out of a domain.
	var union uint64
	for _, m := range masks {
		union |= m
	}
	if union != all {
		t.Fatalf("domains cover kinds %#x, event kinds are %#x", union, all)
	}

	dir := t.TempDir()
	src, bin := filepath.Join(dir, "values.c"), filepath.Join(dir, "values")
	if err := os.WriteFile(src, prog.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, cc, "-std=c11", "-Wall", "-Wextra", "-Werror",
		"-I"+filepath.Join(root, "runtime/include"), "-I"+filepath.Join(root, "runtime/src"),
		"-o", bin, src).CombinedOutput()
	if err != nil {
		t.Fatalf("cc %s: %v\n%s", src, err, out)
	}
	got, err := exec.CommandContext(ctx, bin).Output()
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(want.String(), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("line %d: C prints %q, Go says %q", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("C printed %d lines, Go has %d", len(gl), len(wl))
	}
}
