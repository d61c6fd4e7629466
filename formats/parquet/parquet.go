// Package parquet writes the analysis's rows as Parquet files: one file per trace
// (rank), zstd-compressed, in row groups of at most RowGroupRows rows, with
// the schema of SCHEMA.md (analysis.Record) and the process description as
// key-value metadata. A trace with OpenMP rows also gets the OpenMP tables
// (omp.Record, omp.EdgeRecord) beside it (omp.TablePath).
package parquet

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/omp"
)

// RowGroupRows bounds a row group: parquet-go keeps a whole row group in
// memory until it is flushed.
const RowGroupRows = 1 << 20

// batch is the number of records handed to parquet-go at once.
const batch = 1 << 14

// Metadata keys written in every file.
const (
	KeySchemaVersion = "occa-tools.schema_version"
	KeyProcess       = "occa-tools.process" // JSON: analysis.ProcessInfo
	KeyEpoch         = "occa-tools.epoch"
)

// Epoch explains the time columns; it is KeyEpoch's value.
const Epoch = "start and device_start are unix timestamps to the µs (UTC), start_ns and device_start_ns the same times exactly, in unix ns, from the trace's CLOCK_MONOTONIC times as mono - mono_start + wall_start (occa-tools FORMAT.md §2)"

// EpochOpenMP is KeyEpoch's value in the OpenMP table.
const EpochOpenMP = "start and created are unix timestamps to the µs (UTC), start_ns and created_ns the same times exactly, in unix ns, from the trace's CLOCK_MONOTONIC times as mono - mono_start + wall_start (occa-tools FORMAT.md §2)"

// Writer writes one process's rows to one Parquet file.
type Writer struct {
	f    *os.File
	bw   *bufio.Writer
	w    *pq.GenericWriter[analysis.Record]
	fl   *analysis.Flattener
	buf  []analysis.Record
	rows int64
	omp  *ompTables // nil until the first OpenMP row
}

// ompTables writes the OpenMP table of a trace as its rows come and its
// dependences table on Close.
type ompTables struct {
	events string // the events table's path
	f      *os.File
	bw     *bufio.Writer
	w      *pq.GenericWriter[omp.Record]
	fl     *omp.Flattener
	buf    []omp.Record
}

// Create makes the file at path for process p.
func Create(path string, p *analysis.Process) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w := newWriter[analysis.Record](bw, p, analysis.SchemaVersion, Epoch)
	return &Writer{f: f, bw: bw, w: w, fl: analysis.NewFlattener(p), buf: make([]analysis.Record, 0, batch),
		omp: &ompTables{events: path}}, nil
}

// newWriter returns a writer of T rows with the options and metadata every
// table has (no epoch when epoch is "").
func newWriter[T any](w io.Writer, p *analysis.Process, version, epoch string) *pq.GenericWriter[T] {
	info, _ := json.Marshal(analysis.Info(p, nil))
	opts := append(encodingOptions(),
		pq.MaxRowsPerRowGroup(RowGroupRows),
		pq.PageBufferSize(256<<10),
		pq.CreatedBy("occa-tools", "", ""),
		pq.KeyValueMetadata(KeySchemaVersion, version))
	if epoch != "" {
		opts = append(opts, pq.KeyValueMetadata(KeyEpoch, epoch))
	}
	opts = append(opts, pq.KeyValueMetadata(KeyProcess, string(info)))
	return pq.NewGenericWriter[T](w, opts...)
}

// encodingOptions say how every table's columns are stored (SCHEMA.md):
// zstd at its fastest level; the columns' tags (table.Column.ParquetTag)
// say the encodings.
func encodingOptions() []pq.WriterOption {
	return []pq.WriterOption{pq.Compression(&zstd.Codec{Level: zstd.SpeedFastest})}
}

// Add writes one row; it has the analysis.Sink signature.
func (w *Writer) Add(p *analysis.Process, r *analysis.Row) error {
	if r.OMP != nil {
		return w.omp.add(p, r)
	}
	w.buf = w.buf[:len(w.buf)+1]
	w.fl.Flatten(&w.buf[len(w.buf)-1], r)
	if len(w.buf) == cap(w.buf) {
		return w.flush()
	}
	return nil
}

func (w *Writer) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	n, err := w.w.Write(w.buf)
	w.rows += int64(n)
	w.buf = w.buf[:0]
	return err
}

// Rows returns the rows written so far.
func (w *Writer) Rows() int64 { return w.rows + int64(len(w.buf)) }

// Close finishes the file, and the OpenMP tables when the trace had OpenMP
// rows. res, when not nil, updates the process metadata with what reading
// the whole trace learned (drops, completeness).
func (w *Writer) Close(res *analysis.Result) error {
	err := w.flush()
	if res != nil {
		info, _ := json.Marshal(analysis.Info(res.Process, res))
		w.w.SetKeyValueMetadata(KeyProcess, string(info))
	}
	if e := w.w.Close(); err == nil {
		err = e
	}
	if e := w.bw.Flush(); err == nil {
		err = e
	}
	if e := w.f.Close(); err == nil {
		err = e
	}
	if err != nil {
		err = fmt.Errorf("%s: %w", w.f.Name(), err)
	}
	if e := w.omp.close(res); err == nil {
		err = e
	}
	return err
}

// add writes an OpenMP row to the OpenMP table (made at the first).
func (t *ompTables) add(p *analysis.Process, r *analysis.Row) error {
	if !omp.InTable(r) {
		return nil
	}
	if t.w == nil {
		f, err := omp.CreateTable(t.events, omp.TableRows)
		if err != nil {
			return err
		}
		t.f, t.bw = f, bufio.NewWriterSize(f, 1<<20)
		t.w = newWriter[omp.Record](t.bw, p, analysis.SchemaVersion, EpochOpenMP)
		t.fl = omp.NewFlattener(p)
		t.buf = make([]omp.Record, 0, batch)
	}
	t.buf = t.buf[:len(t.buf)+1]
	t.fl.Flatten(&t.buf[len(t.buf)-1], r)
	if len(t.buf) == cap(t.buf) {
		return t.flush()
	}
	return nil
}

func (t *ompTables) flush() error {
	_, err := t.w.Write(t.buf)
	t.buf = t.buf[:0]
	return err
}

// close finishes the OpenMP table and writes the dependences table, when
// the trace had tasks.
func (t *ompTables) close(res *analysis.Result) error {
	var err error
	if t.w != nil {
		err = t.flush()
		if res != nil {
			info, _ := json.Marshal(analysis.Info(res.Process, res))
			t.w.SetKeyValueMetadata(KeyProcess, string(info))
		}
		if e := t.w.Close(); err == nil {
			err = e
		}
		if e := t.bw.Flush(); err == nil {
			err = e
		}
		if e := t.f.Close(); err == nil {
			err = e
		}
		if err != nil {
			return fmt.Errorf("%s: %w", t.f.Name(), err)
		}
	}
	if res == nil || res.Tasks == nil || res.Tasks.Empty() {
		return nil
	}
	f, err := omp.CreateTable(t.events, omp.TableDependences)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	w := newWriter[omp.EdgeRecord](bw, res.Process, analysis.SchemaVersion, "")
	info, _ := json.Marshal(analysis.Info(res.Process, res))
	w.SetKeyValueMetadata(KeyProcess, string(info))
	_, err = w.Write(omp.EdgeRecords(res.Process, res.Tasks))
	return closeFile(err, w, bw, f)
}

// closeFile finishes a table written through w, bw and f, and returns the
// first error, err's included, naming the file.
func closeFile(err error, w io.Closer, bw *bufio.Writer, f *os.File) error {
	if e := w.Close(); err == nil {
		err = e
	}
	if e := bw.Flush(); err == nil {
		err = e
	}
	if e := f.Close(); err == nil {
		err = e
	}
	if err != nil {
		return fmt.Errorf("%s: %w", f.Name(), err)
	}
	return nil
}

// WriteProcesses writes the process table (analysis.Processes) to path.
func WriteProcesses(path string, infos []analysis.ProcessInfo) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	opts := append(encodingOptions(),
		pq.CreatedBy("occa-tools", "", ""), pq.KeyValueMetadata(KeySchemaVersion, analysis.SchemaVersion))
	w := pq.NewGenericWriter[analysis.ProcessInfo](bw, opts...)
	_, err = w.Write(infos)
	return closeFile(err, w, bw, f)
}
