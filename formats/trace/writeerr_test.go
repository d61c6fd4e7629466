package trace_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// fullDisk fails its failAt'th Write (1 is the header) with ENOSPC, then
// works again. With partial set it first writes half of the failing Write;
// with rewind also set it then takes that half back and says so (Rewinder),
// as the runtime's trace file does.
type fullDisk struct {
	buf     bytes.Buffer
	writes  int
	failAt  int
	partial bool
	rewind  bool
	rewound bool
}

func (d *fullDisk) Write(p []byte) (int, error) {
	d.writes++
	d.rewound = false
	if d.writes != d.failAt {
		return d.buf.Write(p)
	}
	if !d.partial {
		return 0, syscall.ENOSPC
	}
	n := len(p) / 2
	d.buf.Write(p[:n])
	if d.rewind {
		d.buf.Truncate(d.buf.Len() - n)
		d.rewound = true
	}
	return n, syscall.ENOSPC
}

func (d *fullDisk) Rewound() bool { return d.rewind && d.rewound }

// writeBatches writes tracetest's defs, then five batches of 100 events
// alternating threads 0 and 1 (writes 3..7), then closes. It returns the
// events whose batch was written, the write errors by write number, and the
// writer.
func writeBatches(t *testing.T, d *fullDisk) (written []trace.Event, errs map[int]error, w *trace.Writer) {
	t.Helper()
	w, err := trace.NewWriter(d, tracetest.Header())
	if err != nil {
		t.Fatal(err)
	}
	errs = map[int]error{}
	if err := w.WriteDefs(tracetest.Defs()); err != nil {
		errs[d.writes] = err
	}
	threads := threeThreads(300)
	pos := [2]int{}
	for i := 0; i < 5; i++ {
		th := i % 2
		b := w.Batch(uint32(th))
		evs := threads[th][pos[th] : pos[th]+100]
		pos[th] += 100
		for k := range evs {
			if err := b.AddEvent(&evs[k]); err != nil {
				t.Fatal(err)
			}
		}
		before, off := w.Stats(), w.Offset()
		if err := w.WriteBatch(b); err != nil {
			errs[d.writes] = err
			if b.Len() != 0 {
				t.Errorf("write %d: the failed batch was not reset", d.writes)
			}
			if w.Err() == nil && (w.Offset() != off || w.Stats() != before) {
				t.Errorf("write %d: a lost chunk changed the writer: offset %d -> %d, stats %+v -> %+v", d.writes, off, w.Offset(), before, w.Stats())
			}
			continue
		}
		written = append(written, evs...)
	}
	if err := w.Close(); err != nil {
		errs[d.writes] = err
	}
	return written, errs, w
}

// readEvents reads data to its end.
func readEvents(t *testing.T, data []byte) ([]trace.Event, *trace.Reader, error) {
	t.Helper()
	r, err := trace.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var evs []trace.Event
	for {
		e, err := r.ReadEvent()
		if err == io.EOF {
			return evs, r, nil
		}
		if err != nil {
			return evs, r, err
		}
		evs = append(evs, e)
	}
}

// TestWriteErrorRecovers: a chunk that could not be written is lost, and
// nothing else. Writes 2 (defs), 3..7 (batches) and 8 (final stats) fail in
// turn, with nothing written or with a partial write taken back.
func TestWriteErrorRecovers(t *testing.T) {
	for _, mode := range []string{"nothing written", "rewound"} {
		for failAt := 2; failAt <= 8; failAt++ {
			d := &fullDisk{failAt: failAt, partial: mode == "rewound", rewind: true}
			written, errs, w := writeBatches(t, d)
			err := errs[failAt]
			if len(errs) != 1 || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "the chunk is lost; the file still ends at a chunk boundary") {
				t.Fatalf("%s, write %d fails: errors %v", mode, failAt, errs)
			}
			if w.Err() != nil {
				t.Fatalf("%s, write %d fails: the error stuck: %v", mode, failAt, w.Err())
			}
			if failAt == 8 {
				// The final stats were lost: Close again.
				if err := w.Close(); err != nil {
					t.Fatalf("second Close: %v", err)
				}
			}
			got, r, err := readEvents(t, d.buf.Bytes())
			if err != nil {
				t.Fatalf("%s, write %d fails: reading: %v", mode, failAt, err)
			}
			// Batches are in file order, one thread's events each.
			if !slices.Equal(got, written) {
				t.Errorf("%s, write %d fails: read %d events, %d were written", mode, failAt, len(got), len(written))
			}
			want := 500
			if failAt >= 3 && failAt <= 7 {
				want = 400
			}
			s := r.Stats()
			offs := chunkOffsets(d.buf.Bytes())
			if len(written) != want || s.TotalEvents() != uint64(want) || !r.Complete() || s.Bytes != uint64(offs[len(offs)-1]) {
				t.Errorf("%s, write %d fails: %d events written, stats count %d, complete %v", mode, failAt, len(written), s.TotalEvents(), r.Complete())
			}
			if int64(d.buf.Len()) != w.Offset() {
				t.Errorf("%s, write %d fails: file is %d bytes, the writer counts %d", mode, failAt, d.buf.Len(), w.Offset())
			}
			if failAt == 2 {
				if k := r.Dict().Kernel(1).Name; k != "kernel#1" {
					t.Errorf("defs lost, yet kernel 1 is %q", k)
				}
			}
		}
	}
}

// TestWriteErrorSticks: a chunk cut short in the file ends the trace there.
func TestWriteErrorSticks(t *testing.T) {
	d := &fullDisk{failAt: 5, partial: true} // the third batch, thread 0's second
	written, errs, w := writeBatches(t, d)
	err := errs[5]
	if !errors.Is(err, syscall.ENOSPC) || w.Err() != err {
		t.Fatalf("write 5: %v, Err() = %v", err, w.Err())
	}
	if !strings.Contains(err.Error(), "of its bytes reached the file, which is broken from there: no more chunks can be written") {
		t.Errorf("error does not say the file is broken: %v", err)
	}
	// The later batches and Close return the same error.
	if len(written) != 200 || len(errs) != 1 && errs[5] != err {
		t.Errorf("%d events written, errors %v", len(written), errs)
	}
	if err := w.Close(); err != w.Err() {
		t.Errorf("Close after the sticky error: %v", err)
	}
	if int64(d.buf.Len()) != w.Offset() {
		t.Errorf("file is %d bytes, the writer counts %d", d.buf.Len(), w.Offset())
	}
	got, _, rerr := readEvents(t, d.buf.Bytes())
	if !slices.Equal(got, written) || !errors.Is(rerr, io.ErrUnexpectedEOF) || !strings.Contains(rerr.Error(), "the file ends inside a chunk") {
		t.Errorf("read %d events (want %d), then %v", len(got), len(written), rerr)
	}

	// The header is all or nothing, rolled back or not.
	for _, d := range []*fullDisk{{failAt: 1}, {failAt: 1, partial: true, rewind: true}} {
		if _, err := trace.NewWriter(d, tracetest.Header()); !errors.Is(err, syscall.ENOSPC) || !strings.HasPrefix(err.Error(), "trace: writing the file header: ") {
			t.Errorf("header write fails: %v", err)
		}
	}
}
