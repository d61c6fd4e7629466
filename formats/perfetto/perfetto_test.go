package perfetto

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// testWriter makes a writer for a test process (rank 0) into a file in t's
// temporary directory.
func testWriter(t *testing.T, opts ...Option) (*Writer, *analysis.Process, string) {
	t.Helper()
	p := &analysis.Process{Header: tracetest.Header(), Dict: &trace.Dict{}, Rank: 0}
	path := filepath.Join(t.TempDir(), "t.perfetto-trace")
	w, err := Create(path, p, 1, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return w, p, path
}

// Overlapping slices that do not nest go on a sibling lane; nested ones and
// ones that follow stay on the thread's track. Rows may come in any order.
func TestLanes(t *testing.T) {
	w, p, path := testWriter(t)
	rows := []analysis.Row{
		{Kind: trace.RegionPush, Name: "b", Start: 150, Dur: 100, DevDur: -1}, // overlaps a: lane 2
		{Kind: trace.RegionPush, Name: "a", Start: 100, Dur: 100, DevDur: -1},
		{Kind: trace.RegionPush, Name: "a1", Start: 110, Dur: 10, DevDur: -1}, // inside a
		{Kind: trace.RegionPush, Name: "c", Start: 300, Dur: 10, DevDur: -1},  // after both: lane 1
	}
	for i := range rows {
		if err := w.Add(p, &rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if n := bytes.Count(b, []byte("thread 0 #2")); n != 1 {
		t.Errorf("%d second lanes, want 1", n)
	}
	if bytes.Contains(b, []byte("#3")) {
		t.Errorf("a third lane")
	}
	if w.Late() != 0 {
		t.Errorf("%d late rows", w.Late())
	}
	// Lane of each slice: begin packets in start order a, a1, b, c.
	if got := w.threadsLo[0].lanes; len(got.lanes) != 2 {
		t.Errorf("%d lanes", len(got.lanes))
	}
}

// fixLen moves the body when its length needs more than one byte.
func TestFixLen(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 300, 20000} {
		b := append([]byte{9, 0}, bytes.Repeat([]byte{7}, n)...)
		b = fixLen(b, 1)
		want := enc([]byte{9}).bytes(0, bytes.Repeat([]byte{7}, n))
		want = append([]byte{9}, want[2:]...) // drop the tag byte enc wrote
		if !bytes.Equal(b, want) {
			t.Errorf("n=%d: % x... want % x...", n, b[:min(len(b), 6)], want[:min(len(want), 6)])
		}
	}
}

// A row held longer than the row ring is moved aside and still written in
// start order.
func TestHeldPastRing(t *testing.T) {
	w, p, path := testWriter(t)
	late := analysis.Row{Kind: trace.RegionPush, Name: "late", Start: 1 << 40, Dur: 5, DevDur: -1}
	if err := w.Add(p, &late); err != nil {
		t.Fatal(err)
	}
	n := ringRows + ReorderRows
	for i := 0; i < n; i++ {
		r := analysis.Row{Kind: trace.RegionPush, Name: "r", Start: int64(10 * i), Dur: 5, DevDur: -1}
		if err := w.Add(p, &r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
	if w.Late() != 0 || len(w.over) != 0 {
		t.Errorf("%d late rows, %d left aside", w.Late(), len(w.over))
	}
	b, _ := os.ReadFile(path)
	if !bytes.Contains(b, []byte("late")) {
		t.Errorf("the held row is missing")
	}
}

// Rows of two threads arrive a chunk of each in turn, the second's
// interleaved in time with the first's, for several reorder flushes: each
// flush releases held rows from where they are and from the merge with the
// new ones. Every slice is written, in start order (none late), with its
// end.
func TestReleaseInStartOrder(t *testing.T) {
	w, p, path := testWriter(t)
	const chunk = 3000
	const rounds = 50 // 300,000 rows: releases at two flushes and at the end
	for c := range rounds {
		for th := range uint32(2) {
			for i := c * chunk; i < (c+1)*chunk; i++ {
				r := analysis.Row{Kind: trace.RegionPush, Name: "r", Thread: th, Start: int64(10*i) + 5*int64(th), Dur: 4, DevDur: -1}
				if err := w.Add(p, &r); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
	if w.Late() != 0 {
		t.Errorf("%d late rows", w.Late())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := decode(t, b)
	perThread := map[string]int{}
	for u, ss := range d.slices(t) {
		name := d.tracks[u]
		perThread[name] += len(ss)
		for i, s := range ss {
			if s.end-s.start != 4 || (i > 0 && s.start-ss[i-1].start != 10) {
				t.Fatalf("%s: slice %d at %d..%d after one at %d", name, i, s.start, s.end, ss[i-1].start)
			}
		}
	}
	if want := map[string]int{"thread 0 (tid 1000)": rounds * chunk, "thread 1 (tid 1001)": rounds * chunk}; !maps.Equal(perThread, want) {
		t.Errorf("slices per track %v, want %v", perThread, want)
	}
	var last int64
	for _, e := range d.events {
		if e.typ == typeSliceBegin && e.ts < last {
			t.Fatalf("a begin at %d after one at %d", e.ts, last)
		}
		if e.typ == typeSliceBegin {
			last = e.ts
		}
	}
}

// Writers closed give their rows, their growing buffers (keys, merges,
// output) and compressors to the next ones, also after a failed write:
// traces long enough for a reorder flush before the last, written one
// after another and side by side, come out byte for byte as the first
// writer's did.
func TestWritersReuseBuffers(t *testing.T) {
	p := &analysis.Process{Header: tracetest.Header(), Dict: &trace.Dict{}, Rank: 3}
	var rows []analysis.Row
	for i := range ReorderRows/2 + 3*batchRows {
		s := int64(1000 * i)
		switch i % 3 {
		case 0:
			rows = append(rows, analysis.Row{Kind: trace.RunBegin, Name: "k", Start: s, Dur: 400, Corr: uint64(i + 1), Device: 1, Stream: 2, DevDur: -1})
		case 1:
			rows = append(rows, analysis.Row{Kind: trace.CopyBegin, Start: s, Dur: 300, Bytes: 4096, Device: 1, Aux: 1, DevDur: -1})
		default:
			rows = append(rows, analysis.Row{Kind: trace.RegionPush, Name: "step", Start: s - 500, Dur: 900, Thread: 1, DevDur: -1})
		}
	}
	write := func(path string) []byte {
		w, err := Create(path, p, 1, Compressed())
		if err != nil {
			t.Error(err)
			return nil
		}
		for i := range rows {
			if err := w.Add(p, &rows[i]); err != nil {
				t.Error(err)
			}
		}
		if err := w.Close(nil); err != nil {
			t.Error(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Error(err)
		}
		return b
	}
	dir := t.TempDir()
	want := write(filepath.Join(dir, "first"))
	if len(want) < 1000 {
		t.Fatalf("a trace of %d bytes", len(want))
	}
	// A writer whose file fails (no space) gives its buffers back too,
	// with whatever it held when it failed.
	if w, err := Create("/dev/full", p, 1, Compressed()); err == nil {
		for i := range rows {
			if w.Add(p, &rows[i]) != nil {
				break
			}
		}
		if err := w.Close(nil); err == nil {
			t.Errorf("a writer to /dev/full closed without an error")
		}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 3 {
				if got := write(filepath.Join(dir, fmt.Sprintf("g%d-%d", g, k))); !bytes.Equal(got, want) {
					t.Errorf("writer %d of goroutine %d: %d bytes differ from the first's %d", k, g, len(got), len(want))
				}
			}
		}()
	}
	wg.Wait()
}

// TestTrackCaps: threads, devices and a device's streams past maxThreads,
// maxDevices and maxStreams share one track each, and no slice is lost.
func TestTrackCaps(t *testing.T) {
	w, p, path := testWriter(t)
	const threads, devices, streams = maxThreads + 3, maxDevices + 5, maxStreams + 7
	now := int64(0)
	add := func(r analysis.Row) {
		r.Start, r.DevDur = now, -1
		now += 100
		if err := w.Add(p, &r); err != nil {
			t.Fatal(err)
		}
	}
	for th := range threads { // a region on every thread
		add(analysis.Row{Kind: trace.RegionPush, Thread: uint32(th), Name: "r", Dur: 10})
	}
	for d := range devices { // a launch on every device, thread 0
		add(analysis.Row{Kind: trace.RunBegin, Name: "k", Dur: 10, Corr: uint64(d + 1), Device: uint64(d + 1)})
	}
	for s := range streams { // and on every stream of device 1
		add(analysis.Row{Kind: trace.RunBegin, Name: "k", Dur: 10, Corr: uint64(devices + s + 1), Device: 1, Stream: uint64(s + 1)})
	}
	if err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
	if w.LeftOut() != 0 {
		t.Errorf("%d slices left out", w.LeftOut())
	}
	data, _ := os.ReadFile(path)
	d := decode(t, data)
	count := map[string]int{} // tracks by name, stream and thread numbers aside
	for _, name := range d.tracks {
		switch {
		case strings.HasPrefix(name, "stream "):
			name = "stream"
		case strings.HasPrefix(name, "thread "):
			name = "thread"
		case strings.HasPrefix(name, "device device#"):
			name = "device"
		}
		count[name]++
	}
	otherDev := "device " + pastName("devices", maxDevices)
	otherTh := pastName("threads", maxThreads)
	otherStrm := pastName("streams", maxStreams)
	// Every device's stream 0 ("current stream", the shared device's
	// too), and device 1's streams past it up to maxStreams in all.
	want := map[string]int{"thread": maxThreads, "device": maxDevices, otherDev: 1, otherTh: 1, otherStrm: 1,
		"current stream": maxDevices + 1, "stream": maxStreams - 1}
	for name, n := range want {
		if count[name] != n {
			t.Errorf("%d tracks %q, want %d", count[name], name, n)
		}
	}
	slices := 0
	for u, ss := range d.slices(t) {
		slices += len(ss)
		switch d.tracks[u] {
		case otherTh:
			if len(ss) != threads-maxThreads {
				t.Errorf("%d slices on %q, want %d", len(ss), otherTh, threads-maxThreads)
			}
		case otherStrm:
			if want := streams - (maxStreams - 1); len(ss) != want {
				t.Errorf("%d slices on %q, want %d", len(ss), otherStrm, want)
			}
		}
	}
	// Every row a slice on its thread, every launch one more on its stream.
	if want := threads + 2*(devices+streams); slices != want {
		t.Errorf("%d slices, want %d", slices, want)
	}
}

// TestInternAnew: past maxInterned names, the sequence's incremental state
// is cleared and names are interned anew; every slice keeps its own name,
// also slices whose end waited for its time across a clear.
func TestInternAnew(t *testing.T) {
	w, p, path := testWriter(t, Compressed())
	const n = maxInterned + maxInterned/2
	for i := range n {
		// A region per name on thread 0, and one long region on thread 1
		// every 1000 whose end waits across many rows.
		r := analysis.Row{Kind: trace.RegionPush, Name: "r" + strconv.Itoa(i), Start: int64(10 * i), Dur: 5, DevDur: -1}
		if err := w.Add(p, &r); err != nil {
			t.Fatal(err)
		}
		if i%1000 == 0 {
			r := analysis.Row{Kind: trace.RegionPush, Thread: 1, Name: "long", Start: int64(10*i + 1), Dur: 9000, DevDur: -1}
			if err := w.Add(p, &r); err != nil {
				t.Fatal(err)
			}
			// A launch whose device slice starts 50 µs (5000 rows) later:
			// its packet, naming an interned id, waits for its time, so
			// that some wait across the clear.
			l := analysis.Row{Kind: trace.RunBegin, Thread: 2, Name: "k" + strconv.Itoa(i), Start: int64(10*i + 2), Dur: 3,
				Corr: uint64(i + 1), Device: 1, DevStart: int64(10*i + 50002), DevDur: 100}
			if err := w.Add(p, &l); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
	if len(w.names) >= maxInterned {
		t.Errorf("%d names interned at the end", len(w.names))
	}
	data, _ := os.ReadFile(path)
	d := decode(t, data) // fails on a name iid not interned in its generation
	if d.clears != 2 {   // the first packet, and one past maxInterned
		t.Errorf("%d clears of the incremental state, want 2", d.clears)
	}
	seen, long, kernels := map[string]bool{}, 0, 0
	for _, ss := range d.slices(t) {
		for _, s := range ss {
			if strings.HasPrefix(s.b.name, "run k") {
				continue
			}
			if strings.HasPrefix(s.b.name, "k") { // a device slice
				if want := "k" + strconv.FormatInt((s.start-p.WallTime(50002))/10, 10); s.b.name != want {
					t.Fatalf("device slice at %d named %q, want %q", s.start, s.b.name, want)
				}
				kernels++
				continue
			}
			if s.b.name == "long" {
				if s.end-s.start != 9000 {
					t.Errorf("long region of %d ns at %d, want 9000", s.end-s.start, s.start)
				}
				long++
				continue
			}
			want := "r" + strconv.FormatInt((s.start-p.WallTime(0))/10, 10)
			if s.b.name != want || seen[want] {
				t.Fatalf("slice at %d named %q, want %q once", s.start, s.b.name, want)
			}
			seen[want] = true
		}
	}
	if len(seen) != n || long != (n+999)/1000 || kernels != long {
		t.Errorf("%d named regions, %d long ones and %d device slices, want %d, %d and %d", len(seen), long, kernels, n, (n+999)/1000, (n+999)/1000)
	}
}

// A ring row is two cache lines, and a batch of them starts on a line: no
// row straddles a third. (With 32-bit pointers and ints it is smaller.)
func TestRingRowLines(t *testing.T) {
	want := uintptr(128)
	if unsafe.Sizeof(uintptr(0)) == 4 {
		want = 116
	}
	if size := unsafe.Sizeof(ringRow{}); size != want {
		t.Errorf("a ringRow takes %d bytes, want %d", size, want)
	}
	rows := make([]ringRow, 0, batchRows)
	if at := uintptr(unsafe.Pointer(unsafe.SliceData(rows))); at%64 != 0 {
		t.Errorf("a batch's rows start at %#x, not on a 64-byte line", at)
	}
}
