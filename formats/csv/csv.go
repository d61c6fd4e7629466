// Package csv writes the analysis's rows as CSV (RFC 4180: comma-separated, CRLF
// line ends, fields quoted when they hold a comma, a quote, CR or LF, quotes
// doubled): a header row, then the columns of the Parquet schema
// (formats/parquet/SCHEMA.md) in the same order: timestamps (start,
// device_start) as ISO 8601 UTC text to the µs, their exact unix ns in the
// *_ns columns; device_start is empty when the launch has no device time.
// The process table is written by WriteProcesses. A trace with OpenMP rows
// also gets the OpenMP tables (omp.Record, omp.EdgeRecord) beside its
// events table (omp.TablePath), with the same columns as their Parquet
// files (created empty when unknown).
package csv

import (
	"encoding/csv"
	"io"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/omp"
	"github.com/libocca/occa-tools/formats/table"
)

// Writer writes one process's rows to one CSV file.
type Writer struct {
	out *table.File
	fl  *analysis.Flattener
	rec analysis.Record
	omp ompTables
}

// ompTables writes the OpenMP and dependences tables of a trace as its
// rows come.
type ompTables struct {
	events string      // the events table's path
	rows   *table.File // the OpenMP table, made at its first row
	fl     *omp.Flattener
	rec    omp.Record
	deps   *omp.DependenceRows // made at the first OpenMP row
	edges  *table.File         // the dependences table, made at its first row or on Close
	stats  analysis.GraphStats
}

// Create makes the file at path for process p and writes the header row.
func Create(path string, p *analysis.Process) (*Writer, error) {
	out, err := table.CreateFile(path)
	if err != nil {
		return nil, err
	}
	w := &Writer{out: out, fl: analysis.NewFlattener(p), omp: ompTables{events: path}}
	w.out.WriteString(analysis.Events.CSVHeader())
	return w, nil
}

// Add writes one row; it has the analysis.Sink signature.
func (w *Writer) Add(p *analysis.Process, r *analysis.Row) error {
	if r.OMP != nil {
		return w.omp.add(p, r)
	}
	w.fl.Flatten(&w.rec, r)
	return w.out.Commit(analysis.Events.AppendCSV(w.out.Tail(), &w.rec))
}

// Close finishes the file, and the OpenMP tables when the trace had OpenMP
// rows.
func (w *Writer) Close(res *analysis.Result) error {
	err := w.out.Close()
	if e := w.omp.close(); err == nil {
		err = e
	}
	return err
}

// TaskGraph says what the task graph's bounds cost the dependences table.
func (w *Writer) TaskGraph() analysis.GraphStats { return w.omp.stats }

// create makes the file of table for the trace and writes its header row.
func (t *ompTables) create(name, header string) (*table.File, error) {
	f, err := table.CreateFile(omp.TablePath(t.events, name))
	if err != nil {
		return nil, err
	}
	f.WriteString(header)
	return f, nil
}

// add writes an OpenMP row to the OpenMP table (made at the first).
func (t *ompTables) add(p *analysis.Process, r *analysis.Row) error {
	if t.deps == nil {
		t.deps = omp.NewDependenceRows(p, t.addEdge)
	}
	if err := t.deps.Add(r); err != nil {
		return err
	}
	if !omp.InTable(r) {
		return nil
	}
	if t.rows == nil {
		var err error
		if t.rows, err = t.create(omp.TableRows, omp.Rows.CSVHeader()); err != nil {
			return err
		}
		t.fl = omp.NewFlattener(p)
	}
	t.fl.Flatten(&t.rec, r)
	return t.rows.Commit(omp.Rows.AppendCSV(t.rows.Tail(), &t.rec))
}

func (t *ompTables) addEdge(e *omp.EdgeRecord) error {
	if err := t.dependences(); err != nil {
		return err
	}
	return t.edges.Commit(omp.Dependences.AppendCSV(t.edges.Tail(), e))
}

// dependences makes the dependences table at its first row.
func (t *ompTables) dependences() error {
	if t.edges != nil {
		return nil
	}
	var err error
	t.edges, err = t.create(omp.TableDependences, omp.Dependences.CSVHeader())
	return err
}

// close writes the dependences left and finishes both tables; a trace
// with tasks has a dependences table, be it empty.
func (t *ompTables) close() error {
	var err error
	if t.deps != nil {
		var tasks bool
		if tasks, t.stats, err = t.deps.Close(); err == nil && tasks {
			err = t.dependences()
		}
	}
	for _, f := range []*table.File{t.rows, t.edges} {
		if f == nil {
			continue
		}
		if e := f.Close(); err == nil {
			err = e
		}
	}
	return err
}

// WriteProcesses writes the process table (analysis.Processes). It quotes
// with encoding/csv, which also quotes a field that starts with a space,
// as the CSV process table always has.
func WriteProcesses(w io.Writer, infos []analysis.ProcessInfo) error {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	cw.Write(analysis.Processes.Names())
	for i := range infos {
		cw.Write(analysis.Processes.Strings(&infos[i]))
	}
	cw.Flush()
	return cw.Error()
}
