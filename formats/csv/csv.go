// Package csv writes model rows as CSV (RFC 4180: comma-separated, CRLF
// line ends, fields quoted when they hold a comma, a quote, CR or LF, quotes
// doubled): a header row, then the columns of the Parquet schema
// (formats/parquet/SCHEMA.md) in the same order. Times (start,
// device_start) are unix ns as integers; device_start is empty when the
// launch has no device time. The process table (_processes.csv) is written
// by WriteProcesses.
package csv

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/libocca/occa-tools/formats/model"
)

// Writer writes one process's rows to one CSV file.
type Writer struct {
	f   *os.File
	bw  *bufio.Writer
	fl  *model.Flattener
	rec model.Record
	b   []byte
}

// Create makes the file at path for process p and writes the header row.
func Create(path string, p *model.Process) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w := &Writer{f: f, bw: bufio.NewWriterSize(f, 1<<20), fl: model.NewFlattener(p)}
	w.bw.WriteString(strings.Join(model.Columns, ",") + "\r\n")
	return w, nil
}

// Add writes one row; it has the model.Sink signature.
func (w *Writer) Add(p *model.Process, r *model.Row) error {
	w.fl.Flatten(&w.rec, r)
	w.b = AppendRecord(w.b[:0], &w.rec)
	_, err := w.bw.Write(w.b)
	return err
}

// AppendRecord appends rec as one CSV line (with CRLF).
func AppendRecord(b []byte, r *model.Record) []byte {
	i := func(v int64) { b = strconv.AppendInt(b, v, 10); b = append(b, ',') }
	s := func(v string) { b = appendField(b, v); b = append(b, ',') }
	i(int64(r.Rank))
	s(r.Host)
	i(r.PID)
	i(int64(r.Thread))
	i(r.TID)
	s(r.Kind)
	s(r.Name)
	i(r.Start)
	i(r.Duration)
	i(int64(r.Status))
	i(r.Corr)
	s(r.Device)
	i(r.DeviceID)
	i(r.Stream)
	i(r.Kernel)
	i(r.Memory)
	i(r.Src)
	i(r.Dst)
	i(r.Bytes)
	s(r.Dir)
	i(r.Aux)
	if r.DevStart != 0 {
		b = strconv.AppendInt(b, r.DevStart, 10)
	}
	b = append(b, ',')
	b = strconv.AppendInt(b, r.DevDur, 10)
	return append(b, '\r', '\n')
}

func appendField(b []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return append(b, s...)
	}
	b = append(b, '"')
	b = append(b, strings.ReplaceAll(s, `"`, `""`)...)
	return append(b, '"')
}

// Close finishes the file.
func (w *Writer) Close(*model.Result) error {
	err := w.bw.Flush()
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
	return fmt.Sprintf("events-rank%05d.csv", rank)
}

// ProcessesFile is the name of the process table in an output directory. Its
// leading underscore makes pyarrow (pandas.read_parquet) skip it, and it
// does not match DuckDB's *.parquet globs.
const ProcessesFile = "_processes.csv"

// ProcessColumns are the columns of the process table.
var ProcessColumns = []string{"rank", "host", "pid", "ppid", "world_size", "rank_source", "executable", "cmdline",
	"tool_version", "config_path", "config_text", "clock_source", "wall_start_ns", "mono_start_ns", "trace",
	"events", "dropped", "complete", "damaged_parts"}

// WriteProcesses writes the process table: one row per trace, cmdline as a
// JSON array.
func WriteProcesses(w io.Writer, infos []model.ProcessInfo) error {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	cw.Write(ProcessColumns)
	for _, i := range infos {
		cmd, _ := json.Marshal(i.Cmdline)
		d := strconv.FormatInt
		cw.Write([]string{d(i.Rank, 10), i.Host, d(i.PID, 10), d(i.PPID, 10), d(i.WorldSize, 10), i.RankSource, i.Executable,
			string(cmd), i.ToolVersion, i.ConfigPath, i.ConfigText, i.ClockSource, d(i.WallStart, 10), d(i.MonoStart, 10),
			i.Trace, strconv.FormatUint(i.Events, 10), strconv.FormatUint(i.Dropped, 10), strconv.FormatBool(i.Complete),
			strconv.Itoa(i.Damaged)})
	}
	cw.Flush()
	return cw.Error()
}
