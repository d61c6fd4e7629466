// Package parquet writes the analysis's rows as Parquet files with the
// schema of SCHEMA.md (analysis.Record; the OpenMP tables omp.Record and
// omp.EdgeRecord beside them, omp.TablePath): zstd-compressed, in row groups
// of at most RowGroupRows rows, a file holding the rows of several traces
// (a Part).
package parquet

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"

	pq "github.com/parquet-go/parquet-go"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/omp"
)

// RowGroupRows bounds a row group: parquet-go keeps a whole row group in
// memory until it is flushed.
const RowGroupRows = 1 << 16

// batch is the number of records handed to parquet-go at once.
const batch = 1 << 14

// pageBuffer is parquet-go's page buffer: a column's page is cut when its
// values reach it.
const pageBuffer = 256 << 10

// Metadata keys written in every file.
const (
	KeySchemaVersion = "occa-tools.schema_version"
	KeyEpoch         = "occa-tools.epoch"
)

// Epoch explains the time columns; it is KeyEpoch's value.
const Epoch = "start and device_start are unix timestamps to the µs (UTC), start_ns and device_start_ns the same times exactly, in unix ns, from the trace's CLOCK_MONOTONIC times as mono - mono_start + wall_start (occa-tools FORMAT.md §2)"

// EpochOpenMP is KeyEpoch's value in the OpenMP table.
const EpochOpenMP = "start and created are unix timestamps to the µs (UTC), start_ns and created_ns the same times exactly, in unix ns, from the trace's CLOCK_MONOTONIC times as mono - mono_start + wall_start (occa-tools FORMAT.md §2)"

// Part writes the rows of a sequence of traces, one after another, into
// one file per table: the events table's at the path given to CreatePart,
// the OpenMP tables' beside it (omp.TablePath), each made at its first
// row. The rank is a column, so a query on some ranks skips the row groups
// of the others by their statistics; convert gives a part traces in rank
// order, so that those row groups are few.
type Part struct {
	path   string
	events *file[analysis.Record]
	rows   *file[omp.Record]     // nil until the first OpenMP row
	deps   *file[omp.EdgeRecord] // nil until the first trace with tasks
}

// file is one table's file: rows are gathered in buf and handed to
// parquet-go batch at a time.
type file[T any] struct {
	f   *os.File
	bw  *bufio.Writer
	w   *pq.GenericWriter[T]
	buf []T
}

// CreatePart makes the events file at path.
func CreatePart(path string) (*Part, error) {
	events, err := createFile[analysis.Record](path, Epoch)
	if err != nil {
		return nil, err
	}
	return &Part{path: path, events: events}, nil
}

func createFile[T any](path, epoch string) (*file[T], error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	opts := append(encodingOptions(),
		pq.MaxRowsPerRowGroup(RowGroupRows),
		pq.PageBufferSize(pageBuffer),
		pq.CreatedBy("occa-tools", "", ""),
		pq.KeyValueMetadata(KeySchemaVersion, analysis.SchemaVersion))
	if epoch != "" {
		opts = append(opts, pq.KeyValueMetadata(KeyEpoch, epoch))
	}
	return &file[T]{f: f, bw: bw, w: pq.NewGenericWriter[T](bw, opts...), buf: make([]T, 0, batch)}, nil
}

// next returns the row to fill in; it is written at the next flush.
func (t *file[T]) next() (*T, error) {
	if len(t.buf) == cap(t.buf) {
		if err := t.flush(); err != nil {
			return nil, err
		}
	}
	t.buf = t.buf[:len(t.buf)+1]
	return &t.buf[len(t.buf)-1], nil
}

func (t *file[T]) flush() error {
	if len(t.buf) == 0 {
		return nil
	}
	_, err := t.w.Write(t.buf)
	t.buf = t.buf[:0]
	if err != nil {
		return fmt.Errorf("%s: %w", t.f.Name(), err)
	}
	return nil
}

// close finishes the file and returns the first error, naming the file.
func (t *file[T]) close() error {
	if t == nil {
		return nil
	}
	err := t.flush()
	if e := t.w.Close(); err == nil && e != nil {
		err = fmt.Errorf("%s: %w", t.f.Name(), e)
	}
	if e := t.bw.Flush(); err == nil && e != nil {
		err = fmt.Errorf("%s: %w", t.f.Name(), e)
	}
	if e := t.f.Close(); err == nil && e != nil {
		err = fmt.Errorf("%s: %w", t.f.Name(), e)
	}
	return err
}

// encodingOptions say how every table's columns are stored (SCHEMA.md):
// zstd at its fastest level (pageCodec); the columns' tags (table.Column.ParquetTag)
// say the encodings.
func encodingOptions() []pq.WriterOption {
	return []pq.WriterOption{pq.Compression(pageCodec)}
}

// Close finishes the part's files.
func (pt *Part) Close() error {
	err := pt.events.close()
	for _, e := range []error{pt.rows.close(), pt.deps.close()} {
		if err == nil {
			err = e
		}
	}
	return err
}

// Writer writes one trace's rows into a Part.
type Writer struct {
	part  *Part
	fl    *analysis.Flattener
	ofl   *omp.Flattener      // made at the trace's first OpenMP row
	deps  *omp.DependenceRows // made at the trace's first OpenMP row
	stats analysis.GraphStats // from Close
	rows  int64
	own   bool // Close closes the part too (Create)
}

// Trace returns the writer of process p's rows. The part takes one trace at
// a time: its rows end with the writer's Close.
func (pt *Part) Trace(p *analysis.Process) *Writer {
	return &Writer{part: pt, fl: analysis.NewFlattener(p)}
}

// Create makes a part at path holding process p's rows only.
func Create(path string, p *analysis.Process) (*Writer, error) {
	pt, err := CreatePart(path)
	if err != nil {
		return nil, err
	}
	w := pt.Trace(p)
	w.own = true
	return w, nil
}

// Add writes one row; it has the analysis.Sink signature.
func (w *Writer) Add(p *analysis.Process, r *analysis.Row) error {
	if r.OMP != nil {
		return w.addOpenMP(p, r)
	}
	rec, err := w.part.events.next()
	if err != nil {
		return err
	}
	w.fl.Flatten(rec, r)
	w.rows++
	return nil
}

// addOpenMP writes an OpenMP row to the OpenMP table.
func (w *Writer) addOpenMP(p *analysis.Process, r *analysis.Row) error {
	if w.deps == nil {
		w.deps = omp.NewDependenceRows(p, w.addEdge)
	}
	if err := w.deps.Add(r); err != nil {
		return err
	}
	if !omp.InTable(r) {
		return nil
	}
	pt := w.part
	if pt.rows == nil {
		var err error
		if pt.rows, err = createFile[omp.Record](omp.TablePath(pt.path, omp.TableRows), EpochOpenMP); err != nil {
			return err
		}
	}
	if w.ofl == nil {
		w.ofl = omp.NewFlattener(p)
	}
	rec, err := pt.rows.next()
	if err != nil {
		return err
	}
	w.ofl.Flatten(rec, r)
	return nil
}

// Rows returns the events table's rows written so far.
func (w *Writer) Rows() int64 { return w.rows }

// Close ends the trace's rows: it writes the dependences left of the
// trace's tasks to the dependences table (made for a trace with tasks, be
// it empty), and closes the part when Create made it. res may be nil (the
// trace could not be read).
func (w *Writer) Close(res *analysis.Result) error {
	var err error
	if w.deps != nil {
		var tasks bool
		if tasks, w.stats, err = w.deps.Close(); err == nil && tasks {
			err = w.part.dependences()
		}
	}
	if w.own {
		if e := w.part.Close(); err == nil {
			err = e
		}
	}
	return err
}

// TaskGraph says what the task graph's bounds cost the dependences table.
func (w *Writer) TaskGraph() analysis.GraphStats { return w.stats }

func (w *Writer) addEdge(e *omp.EdgeRecord) error {
	if err := w.part.dependences(); err != nil {
		return err
	}
	rec, err := w.part.deps.next()
	if err != nil {
		return err
	}
	*rec = *e
	return nil
}

// dependences makes the part's dependences table at its first trace with
// tasks.
func (pt *Part) dependences() error {
	if pt.deps != nil {
		return nil
	}
	var err error
	pt.deps, err = createFile[omp.EdgeRecord](omp.TablePath(pt.path, omp.TableDependences), "")
	return err
}

// WriteProcesses writes the process table (analysis.Processes) to path.
func WriteProcesses(path string, infos []analysis.ProcessInfo) error {
	t, err := createFile[analysis.ProcessInfo](path, "")
	if err != nil {
		return err
	}
	if _, err := t.w.Write(infos); err != nil {
		t.close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return t.close()
}
