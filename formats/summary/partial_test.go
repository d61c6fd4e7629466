package summary

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// partialOf returns the partial summary of the small trace (with rank and
// pid of o) and its report.
func partialOf(t testing.TB, o tracetest.SmallOptions) ([]byte, []byte) {
	dir := t.TempDir()
	path := writeSmall(t, dir, "a.occatrace", o)
	c := NewCollector()
	res, err := analysis.Read(path, 0, analysis.Options{}, c.Add)
	if err != nil {
		t.Fatal(err)
	}
	c.Finish(res)
	var rep bytes.Buffer
	if err := c.Report().Write(&rep, "json", ""); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := c.WritePartial(&b, "0/1", []TraceID{{Path: path, Host: "node7", PID: 4242, Rank: 3}}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), rep.Bytes()
}

// A partial summary read back reports what its collector reported.
func TestPartialRoundTrip(t *testing.T) {
	b, want := partialOf(t, tracetest.SmallOptions{})
	path := filepath.Join(t.TempDir(), "p.json")
	os.WriteFile(path, b, 0o644)
	if !IsPartial(path) {
		t.Fatalf("IsPartial: false for %.80s", b)
	}
	c, ids, err := ReadPartial(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 || ids[0].PID != 4242 || ids[0].Rank != 3 {
		t.Errorf("traces %+v", ids)
	}
	var got bytes.Buffer
	if err := c.Report().Write(&got, "json", ""); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("report from the partial:\n%s\nwant\n%s", got.Bytes(), want)
	}
}

// Values no collector holds are errors naming the file and the key.
func TestPartialHostile(t *testing.T) {
	b, _ := partialOf(t, tracetest.SmallOptions{})
	dir := t.TempDir()
	for _, c := range []struct{ old, new, want string }{
		{`"version":1`, `"version":9`, "partial summary version 9; this occa-tools reads version 1"},
		{`"format":"occa-tools partial summary"`, `"format":"x"`, `format "x": not a partial summary`},
		{`"samples":[2000,2000]`, `"samples":[2000]`, "kernels.axpy.host: 1 samples for a count of 2"},
		{`"samples":[2000,2000]`, `"hist":[[99999,2]]`, "kernels.axpy.host: histogram bucket 99999 count 2: no such bucket"},
		{`"samples":[2000,2000]`, `"hist":[[3,1]]`, "kernels.axpy.host: histogram counts 1 values for a count of 2"},
		{`"samples":[2000,2000]`, `"samples":[2000,-5]`, "kernels.axpy.host: sample -5 outside [2000, 2000]"},
		{`"ranks":{"3"`, `"ranks":{"x"`, "ranks.x: not a rank"},
	} {
		if !bytes.Contains(b, []byte(c.old)) {
			t.Fatalf("partial has no %s: %s", c.old, b)
		}
		path := filepath.Join(dir, "p.json")
		os.WriteFile(path, bytes.Replace(b, []byte(c.old), []byte(c.new), 1), 0o644)
		_, _, err := ReadPartial(path)
		if err == nil || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s -> %s: %v, want %q", c.old, c.new, err, c.want)
		}
	}
}

// FuzzPartial: whatever the file holds, reading it and reporting what it
// read never panics.
func FuzzPartial(f *testing.F) {
	b, _ := partialOf(f, tracetest.SmallOptions{})
	f.Add(b)
	f.Add(bytes.Replace(b, []byte(`"samples":[2000,2000]`), []byte(`"hist":[[3,1],[2,1]]`), 1))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "p.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, _, err := ReadPartial(path)
		if err != nil {
			return
		}
		for _, format := range Formats {
			c.Report().Write(&bytes.Buffer{}, format, "")
		}
	})
}
