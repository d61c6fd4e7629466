// Package omp lays out a trace's OpenMP rows (analysis.OMP) and its task
// dependences (analysis.Graph, DependenceRows) as the OpenMP and
// dependences tables of formats/parquet/SCHEMA.md: their column
// declarations (Rows, Dependences), records and file paths.
package omp

import (
	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/table"
	"github.com/libocca/occa-tools/formats/trace"
)

// Table names: each names its directory and files in a convert output
// directory (table.Path, table.GroupPath).
const (
	TableRows        = "openmp"
	TableDependences = "dependences"
)

// TablePath returns the path of table name that goes with the events table
// at events: openmp/openmp-rank00003.csv for events/events-rank00003.csv
// (table.Sibling).
func TablePath(events, name string) string {
	return table.Sibling(events, analysis.Events.Name, name)
}

// Record is one row of the OpenMP table: a analysis.Row with its OMP,
// flattened with its process and names resolved. Its fields are the
// columns of Rows, in order, tagged with their ParquetTags. SCHEMA.md
// describes each column per kind.
type Record struct {
	Rank      int32  `parquet:"rank,delta"`
	Host      string `parquet:"host,dict"`
	PID       int64  `parquet:"pid,delta"`
	Thread    int32  `parquet:"thread,delta"`
	TID       int64  `parquet:"tid,delta"`
	Kind      string `parquet:"kind,dict"`
	StartTime int64  `parquet:"start,timestamp(microsecond:utc),delta"` // unix µs
	Start     int64  `parquet:"start_ns,delta"`
	Duration  int64  `parquet:"duration_ns,delta"`
	ID        int64  `parquet:"id,delta"`
	Parallel  int64  `parquet:"parallel,delta"`
	Task      int64  `parquet:"task,delta"`
	Parent    int64  `parquet:"parent_task,delta"`
	ThreadNum int32  `parquet:"thread_num,delta"`
	TeamSize  int32  `parquet:"team_size,delta"`
	Type      int32  `parquet:"type,delta"`
	TypeName  string `parquet:"type_name,dict"`
	Count     int64  `parquet:"count,delta"`
	Flags     int64  `parquet:"flags,delta"`
	Launch    int64  `parquet:"launch,delta"`
	Status    int32  `parquet:"status,delta"`
	Completed bool   `parquet:"completed"`
	// Created(Time) are null (0 in Go) when unknown or not a task row.
	CreatedTime int64 `parquet:"created,optional,timestamp(microsecond:utc),delta"` // unix µs
	Created     int64 `parquet:"created_ns,optional,delta"`
	Address     int64 `parquet:"address,delta"`
	TaskTime    int64 `parquet:"task_ns,delta"`
}

// Rows is the OpenMP table: Record's columns, in order (formats/table).
var Rows = table.Table[Record]{Name: "openmp", Append: appendRowsCSV, Columns: []table.Column{
	{Name: "rank", Field: "Rank", Type: table.Int32, Doc: "as in the events table"},
	{Name: "host", Field: "Host", Type: table.String, Dict: true, Doc: "as in the events table"},
	{Name: "pid", Field: "PID", Type: table.Int64, Doc: "as in the events table"},
	{Name: "thread", Field: "Thread", Type: table.Int32, Doc: "as in the events table"},
	{Name: "tid", Field: "TID", Type: table.Int64, Doc: "as in the events table"},
	{Name: "kind", Field: "Kind", Type: table.String, Dict: true, Doc: "row kind (above)"},
	{Name: "start", Field: "StartTime", Type: table.Time, Unit: "unix µs", Doc: "start, to the µs"},
	{Name: "start_ns", Field: "Start", Type: table.Int64, Unit: "unix ns", Doc: "start, exact"},
	{Name: "duration_ns", Field: "Duration", Type: table.Int64, Unit: "ns", Doc: "length; 0 instants; -1 unpaired"},
	{Name: "id", Field: "ID", Type: table.Int64, Doc: "the row's id (table above): the id its begin and end share"},
	{Name: "parallel", Field: "Parallel", Type: table.Int64, Doc: "parallel region, 0 none"},
	{Name: "task", Field: "Task", Type: table.Int64, Doc: "the task the row is about, 0 none"},
	{Name: "parent_task", Field: "Parent", Type: table.Int64, Doc: "a region's encountering task, an explicit task's parent"},
	{Name: "thread_num", Field: "ThreadNum", Type: table.Int32, Doc: "the thread's number in its team"},
	{Name: "team_size", Field: "TeamSize", Type: table.Int32, Doc: "team size (requested for `omp_parallel`, actual otherwise)"},
	{Name: "type", Field: "Type", Type: table.Int32, Doc: "thread type, work type, sync kind or dependence type"},
	{Name: "type_name", Field: "TypeName", Type: table.String, Dict: true, Doc: "its name"},
	{Name: "count", Field: "Count", Type: table.Int64, Doc: "a work region's iteration count"},
	{Name: "flags", Field: "Flags", Type: table.Int64, Doc: "OMPT parallel or task flags"},
	{Name: "launch", Field: "Launch", Type: table.Int64, Doc: "correlation_id of the OCCA kernel launch (`run` row) the row happened in; 0 outside launches"},
	{Name: "status", Field: "Status", Type: table.Int32, Doc: "a segment's ending prior_status"},
	{Name: "completed", Field: "Completed", Type: table.Bool, Doc: "the segment completed its task"},
	{Name: "created", Field: "CreatedTime", Type: table.Time, Null: true, Unit: "unix µs", Doc: "the task's creation time, to the µs"},
	{Name: "created_ns", Field: "Created", Type: table.Int64, Null: true, Unit: "unix ns", Doc: "the task's creation time, exact"},
	{Name: "address", Field: "Address", Type: table.Int64, Doc: "a depend item's variable address"},
	{Name: "task_ns", Field: "TaskTime", Type: table.Int64, Unit: "ns", Doc: "a wait's time spent running explicit tasks"},
}}

// InTable reports whether r is a row of the OpenMP table: every OpenMP row
// but the reported dependences, which the dependences table holds.
func InTable(r *analysis.Row) bool { return r.OMP != nil && r.Kind != trace.OmpTaskDependence }

// Flattener turns OpenMP rows of one process into Records.
type Flattener struct {
	p    *analysis.Process
	tids map[uint32]int64
}

// NewFlattener returns a Flattener for p.
func NewFlattener(p *analysis.Process) *Flattener {
	return &Flattener{p: p, tids: map[uint32]int64{}}
}

// Flatten fills rec from r, which has an OMP. Times become unix ns.
func (f *Flattener) Flatten(rec *Record, r *analysis.Row) {
	p, o := f.p, r.OMP
	*rec = Record{Rank: int32(p.Rank), Host: p.Header.Host, PID: p.Header.PID, Thread: int32(r.Thread),
		Kind: analysis.KindName(r.Kind), Start: p.WallTime(r.Start), Duration: r.Dur, ID: int64(o.ID), Parallel: int64(o.Parallel),
		Task: int64(o.Task), Parent: int64(o.Parent), ThreadNum: int32(o.ThreadNum), TeamSize: int32(o.TeamSize),
		Type: int32(o.Type), TypeName: r.Name, Count: int64(o.Count), Flags: int64(o.Flags), Launch: int64(o.Launch),
		Status: int32(r.Status), Completed: o.Completed, Address: int64(o.Address), TaskTime: o.TaskTime}
	rec.StartTime = analysis.Micros(rec.Start)
	if o.Created != 0 {
		rec.Created = p.WallTime(o.Created)
		rec.CreatedTime = analysis.Micros(rec.Created)
	}
	tid, ok := f.tids[r.Thread]
	if !ok {
		tid = int64(p.Dict.Thread(uint64(r.Thread)).TID)
		if tid != 0 {
			f.tids[r.Thread] = tid
		}
	}
	rec.TID = tid
}

// EdgeRecord is one row of the dependences table, the columns of
// Dependences.
type EdgeRecord struct {
	Rank    int32  `parquet:"rank,delta"`
	Host    string `parquet:"host,dict"`
	PID     int64  `parquet:"pid,delta"`
	Src     int64  `parquet:"src_task,delta"`
	Sink    int64  `parquet:"sink_task,delta"`
	Source  string `parquet:"source,dict"`
	Address int64  `parquet:"address,delta"`
	Parent  int64  `parquet:"parent_task,delta"`
	Launch  int64  `parquet:"launch,delta"`
}

// Dependences is the dependences table: EdgeRecord's columns, in order
// (formats/table).
var Dependences = table.Table[EdgeRecord]{Name: "dependences", Append: appendDependencesCSV, Columns: []table.Column{
	{Name: "rank", Field: "Rank", Type: table.Int32, Doc: "as in the events table"},
	{Name: "host", Field: "Host", Type: table.String, Dict: true, Doc: "as in the events table"},
	{Name: "pid", Field: "PID", Type: table.Int64, Doc: "as in the events table"},
	{Name: "src_task", Field: "Src", Type: table.Int64, Doc: "the task depended on"},
	{Name: "sink_task", Field: "Sink", Type: table.Int64, Doc: "the dependent task"},
	{Name: "source", Field: "Source", Type: table.String, Dict: true, Doc: "`depend`, `runtime` or `both`"},
	{Name: "address", Field: "Address", Type: table.Int64, Doc: "the variable whose items gave the edge (the first when several did); 0 for a `runtime` edge"},
	{Name: "parent_task", Field: "Parent", Type: table.Int64, Doc: "the sink's parent task"},
	{Name: "launch", Field: "Launch", Type: table.Int64, Doc: "the OCCA launch the sink was created in, 0 outside"},
}}

// DependenceRows follows one trace's task graph (analysis.Graph) through its
// OpenMP rows and hands each dependence to emit as a row of the
// dependences table once its sink task is retired: in bounded memory, the
// table is written as the trace is read.
type DependenceRows struct {
	p    *analysis.Process
	g    *analysis.Graph
	emit func(*EdgeRecord) error
	rec  EdgeRecord
	err  error
}

// NewDependenceRows returns the DependenceRows of process p's trace.
func NewDependenceRows(p *analysis.Process, emit func(*EdgeRecord) error) *DependenceRows {
	d := &DependenceRows{p: p, g: analysis.NewGraph(), emit: emit}
	d.g.Retire = d.retire
	return d
}

func (d *DependenceRows) retire(t *analysis.Task) {
	for _, e := range t.Preds {
		if d.err != nil {
			return
		}
		d.rec = EdgeRecord{Rank: int32(d.p.Rank), Host: d.p.Header.Host, PID: d.p.Header.PID, Src: int64(e.Src), Sink: int64(e.Sink),
			Source: e.Source.String(), Address: int64(e.Address), Parent: int64(t.Parent), Launch: int64(t.Launch)}
		d.err = d.emit(&d.rec)
	}
}

// Add takes an OpenMP row; it returns the first error of emit.
func (d *DependenceRows) Add(r *analysis.Row) error {
	d.g.Add(r)
	return d.err
}

// Close emits what is left. It reports whether the trace had tasks (its
// dependences table is made even when it has no row), what the graph's
// bounds cost, and the first error of emit.
func (d *DependenceRows) Close() (tasks bool, stats analysis.GraphStats, err error) {
	d.g.Flush()
	return !d.g.Empty(), d.g.Stats, d.err
}
