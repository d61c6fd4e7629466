// Package parquet writes model rows as Parquet files: one file per trace
// (rank), zstd-compressed, in row groups of at most RowGroupRows rows, with
// the schema of SCHEMA.md (model.Record) and the process description as
// key-value metadata.
package parquet

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/libocca/occa-tools/formats/model"
)

// RowGroupRows bounds a row group: parquet-go keeps a whole row group in
// memory until it is flushed.
const RowGroupRows = 1 << 20

// batch is the number of records handed to parquet-go at once.
const batch = 1 << 14

// Metadata keys written in every file.
const (
	KeySchemaVersion = "occa-tools.schema_version"
	KeyProcess       = "occa-tools.process" // JSON: model.ProcessInfo
	KeyEpoch         = "occa-tools.epoch"
)

// Epoch explains the time columns; it is KeyEpoch's value.
const Epoch = "start and device_start are unix time in ns (UTC), from the trace's CLOCK_MONOTONIC times as mono - mono_start + wall_start (occa-tools FORMAT.md §2)"

// Writer writes one process's rows to one Parquet file.
type Writer struct {
	f    *os.File
	bw   *bufio.Writer
	w    *pq.GenericWriter[model.Record]
	fl   *model.Flattener
	buf  []model.Record
	rows int64
}

// Create makes the file at path for process p.
func Create(path string, p *model.Process) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	info, _ := json.Marshal(model.Info(p, nil))
	w := pq.NewGenericWriter[model.Record](bw,
		pq.Compression(&zstd.Codec{Level: zstd.SpeedFastest}),
		pq.MaxRowsPerRowGroup(RowGroupRows),
		pq.PageBufferSize(256<<10),
		pq.CreatedBy("occa-tools", "", ""),
		pq.KeyValueMetadata(KeySchemaVersion, model.SchemaVersion),
		pq.KeyValueMetadata(KeyEpoch, Epoch),
		pq.KeyValueMetadata(KeyProcess, string(info)),
	)
	return &Writer{f: f, bw: bw, w: w, fl: model.NewFlattener(p), buf: make([]model.Record, 0, batch)}, nil
}

// Add writes one row; it has the model.Sink signature.
func (w *Writer) Add(p *model.Process, r *model.Row) error {
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

// Close finishes the file. res, when not nil, updates the process metadata
// with what reading the whole trace learned (drops, completeness).
func (w *Writer) Close(res *model.Result) error {
	err := w.flush()
	if res != nil {
		info, _ := json.Marshal(model.Info(res.Process, res))
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
		return fmt.Errorf("%s: %w", w.f.Name(), err)
	}
	return nil
}

// FileName is the name of rank's file in an output directory.
func FileName(rank int64) string {
	s := strconv.FormatInt(rank, 10)
	if rank >= 0 && len(s) < 5 {
		s = strings.Repeat("0", 5-len(s)) + s
	}
	return "events-rank" + s + ".parquet"
}
