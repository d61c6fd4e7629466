package omp

import (
	"path/filepath"
	"strings"

	"github.com/libocca/occa-tools/formats/model"
	"github.com/libocca/occa-tools/formats/trace"
)

// SchemaVersion is the version of formats/parquet/SCHEMA.md that added the
// OpenMP tables (Record, EdgeRecord), written in their files' metadata.
// The events table (model.Record) is unchanged since model.SchemaVersion.
const SchemaVersion = "1.1"

// Dir is the subdirectory of a convert output directory that holds the
// OpenMP tables: its leading underscore keeps pyarrow's dataset discovery
// (pandas.read_parquet(dir)) out of it, and DuckDB's dir/*.parquet does not
// descend into it.
const Dir = "_openmp"

// Table names, the prefixes of the OpenMP tables' file names.
const (
	TableRows         = "openmp"
	TableDependences  = "dependences"
	eventsTablePrefix = "events-"
)

// TablePath returns the path of table for the trace whose events table is
// at events: dir/events-rank00003.parquet gives
// dir/_openmp/openmp-rank00003.parquet for TableRows.
func TablePath(events, table string) string {
	dir, base := filepath.Split(events)
	base = strings.TrimPrefix(base, eventsTablePrefix)
	return filepath.Join(dir, Dir, table+"-"+base)
}

// Record is one row of the OpenMP table: a model.Row with its OMP,
// flattened with its process and names resolved. Field tags give the
// Parquet column names and types; CSV uses the same names in the same
// order. SCHEMA.md describes each column per kind.
type Record struct {
	Rank      int32  `parquet:"rank"`
	Host      string `parquet:"host,dict"`
	PID       int64  `parquet:"pid"`
	Thread    int32  `parquet:"thread"`
	TID       int64  `parquet:"tid"`
	Kind      string `parquet:"kind,dict"`
	Start     int64  `parquet:"start,timestamp(nanosecond:utc)"`
	Duration  int64  `parquet:"duration_ns"`
	ID        int64  `parquet:"id"`
	Parallel  int64  `parquet:"parallel"`
	Task      int64  `parquet:"task"`
	Parent    int64  `parquet:"parent_task"`
	ThreadNum int32  `parquet:"thread_num"`
	TeamSize  int32  `parquet:"team_size"`
	Type      int32  `parquet:"type"`
	TypeName  string `parquet:"type_name,dict"`
	Count     int64  `parquet:"count"`
	Flags     int64  `parquet:"flags"`
	Launch    int64  `parquet:"launch"`
	Status    int32  `parquet:"status"`
	Completed bool   `parquet:"completed"`
	// Created is null (0 in Go) when unknown or not a task row.
	Created  int64 `parquet:"created,optional,timestamp(nanosecond:utc)"`
	Address  int64 `parquet:"address"`
	TaskTime int64 `parquet:"task_ns"`
}

// Columns lists Record's column names in order.
var Columns = []string{"rank", "host", "pid", "thread", "tid", "kind", "start", "duration_ns", "id", "parallel", "task",
	"parent_task", "thread_num", "team_size", "type", "type_name", "count", "flags", "launch", "status",
	"completed", "created", "address", "task_ns"}

// InTable reports whether r is a row of the OpenMP table: every OpenMP row
// but the reported dependences, which the dependences table holds.
func InTable(r *model.Row) bool { return r.OMP != nil && r.Kind != trace.OmpTaskDependence }

// Flattener turns OpenMP rows of one process into Records.
type Flattener struct {
	p    *model.Process
	tids map[uint32]int64
}

// NewFlattener returns a Flattener for p.
func NewFlattener(p *model.Process) *Flattener {
	return &Flattener{p: p, tids: map[uint32]int64{}}
}

// Flatten fills rec from r, which has an OMP. Times become unix ns.
func (f *Flattener) Flatten(rec *Record, r *model.Row) {
	p, o := f.p, r.OMP
	*rec = Record{Rank: int32(p.Rank), Host: p.Header.Host, PID: p.Header.PID, Thread: int32(r.Thread),
		Kind: model.KindName(r.Kind), Start: p.WallTime(r.Start), Duration: r.Dur, ID: int64(o.ID), Parallel: int64(o.Parallel),
		Task: int64(o.Task), Parent: int64(o.Parent), ThreadNum: int32(o.ThreadNum), TeamSize: int32(o.TeamSize),
		Type: int32(o.Type), TypeName: r.Name, Count: int64(o.Count), Flags: int64(o.Flags), Launch: int64(o.Launch),
		Status: int32(r.Status), Completed: o.Completed, Address: int64(o.Address), TaskTime: o.TaskTime}
	if o.Created != 0 {
		rec.Created = p.WallTime(o.Created)
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

// EdgeRecord is one row of the dependences table.
type EdgeRecord struct {
	Rank    int32  `parquet:"rank"`
	Host    string `parquet:"host,dict"`
	PID     int64  `parquet:"pid"`
	Src     int64  `parquet:"src_task"`
	Sink    int64  `parquet:"sink_task"`
	Source  string `parquet:"source,dict"`
	Address int64  `parquet:"address"`
	Parent  int64  `parquet:"parent_task"`
	Launch  int64  `parquet:"launch"`
}

// EdgeColumns lists EdgeRecord's column names in order.
var EdgeColumns = []string{"rank", "host", "pid", "src_task", "sink_task", "source", "address", "parent_task", "launch"}

// EdgeRecords returns the dependences table of p's graph g: its edges
// (Graph.Edges) with the sink's parent task and launch.
func EdgeRecords(p *model.Process, g *Graph) []EdgeRecord {
	edges := g.Edges()
	out := make([]EdgeRecord, len(edges))
	for i, e := range edges {
		out[i] = EdgeRecord{Rank: int32(p.Rank), Host: p.Header.Host, PID: p.Header.PID, Src: int64(e.Src), Sink: int64(e.Sink),
			Source: e.Source.String(), Address: int64(e.Address)}
		if t := g.Task(e.Sink); t != nil {
			out[i].Parent, out[i].Launch = int64(t.Parent), int64(t.Launch)
		}
	}
	return out
}
