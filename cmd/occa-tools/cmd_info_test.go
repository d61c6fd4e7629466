package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// threadsTrace is a trace whose thread t (0 to n-1) has t+1 markers, in
// batches of thread n-1 down to 0; tracetest.Defs names threads 0 to 2.
func threadsTrace(t *testing.T, n int) *trace.Reader {
	t.Helper()
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, tracetest.Header())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteDefs(tracetest.Defs()); err != nil {
		t.Fatal(err)
	}
	for th := n - 1; th >= 0; th-- {
		b := w.Batch(uint32(th))
		for i := 0; i <= th; i++ {
			e := trace.Event{Kind: trace.Marker, Thread: uint32(th), Time: int64(1000 + i)}
			if err := b.AddEvent(&e); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.WriteBatch(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The threads line names every thread up to infoListThreads of them, else
// the busiest, in index order, with what the others hold; past
// infoMaxThreads threads, the rest are counted together.
func TestInfoThreads(t *testing.T) {
	named := func(from, to int) string {
		var parts []string
		for th := from; th <= to; th++ {
			p := fmt.Sprintf("t%d", th)
			switch th {
			case 0:
				p += " main (tid 4242)"
			case 1, 2:
				p += fmt.Sprintf(" worker (tid %d)", 4242+th)
			}
			parts = append(parts, fmt.Sprintf("%s: %d events", p, th+1))
		}
		return strings.Join(parts, "; ")
	}
	for _, c := range []struct {
		threads, max int
		want         string
	}{
		{3, 1 << 16, "3 (" + named(0, 2) + ")"},
		{16, 1 << 16, "16 (" + named(0, 15) + ")"},
		// 0..19: the busiest are 4..19; 0..3 hold 1+2+3+4 events.
		{20, 1 << 16, "20 (the 16 busiest: " + named(4, 19) + "; 4 more threads: 10 events)"},
		// Read from thread 19 down: 18 counted, 1 and 0 (3 events) past them.
		{20, 18, "more than 18 (the 16 busiest: " + named(4, 19) +
			"; 2 more threads: 7 events; threads past the first 18: 3 events)"},
	} {
		t.Run(fmt.Sprintf("%d-threads-max-%d", c.threads, c.max), func(t *testing.T) {
			defer func(m int) { infoMaxThreads = m }(infoMaxThreads)
			infoMaxThreads = c.max
			r := threadsTrace(t, c.threads)
			sum := summarize(r)
			if sum.err != nil {
				t.Fatal(sum.err)
			}
			if want := uint64(c.threads * (c.threads + 1) / 2); sum.events != want {
				t.Fatalf("events %d, want %d", sum.events, want)
			}
			if got := threadList(r.Dict(), sum.threads, sum.pastEvents); got != c.want {
				t.Errorf("threads line\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

// Definitions a reader did not keep (trace.MaxDictStrings) are said once by
// every command, naming the file; the commands still succeed.
func TestDefsLeftOutReported(t *testing.T) {
	defer func(n int) { trace.MaxDictStrings = n }(trace.MaxDictStrings)
	trace.MaxDictStrings = 10 // tracetest.Defs has 13
	dir := t.TempDir()
	writeTraces(t, dir)
	path := filepath.Join(dir, "small.occa")
	line := path + ": " + leftOutText(3) + "\n"
	for _, c := range []struct {
		args     []string
		inStdout bool
	}{
		{[]string{"info", path}, true},
		{[]string{"dump", path}, false},
		{[]string{"summary", path}, false},
		{[]string{"convert", "-to", "csv", "-o", filepath.Join(dir, "csv"), path}, false},
		{[]string{"convert", "-to", "perfetto", "-o", filepath.Join(dir, "pf"), path}, false},
	} {
		var stdout, stderr bytes.Buffer
		if status := run(c.args, &Env{Stdout: &stdout, Stderr: &stderr}); status != 0 {
			t.Errorf("%v: exit status %d, stderr %s", c.args, status, stderr.String())
		}
		got, want := strings.Count(stderr.String(), line), 1
		if c.inStdout {
			got, want = strings.Count(stdout.String(), "not kept:    "+leftOutText(3)+"\n"), 1
		}
		if got != want {
			t.Errorf("%v: the line said %d times, want %d\nstdout:\n%s\nstderr:\n%s", c.args, got, want, stdout.String(), stderr.String())
		}
	}
}
