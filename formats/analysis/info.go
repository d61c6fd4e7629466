package analysis

import (
	"github.com/libocca/occa-tools/formats/table"
)

// ProcessInfo describes one process (trace file) for the metadata table of
// the outputs (the process table, and the Parquet key-value metadata).
type ProcessInfo struct {
	Rank        int64    `json:"rank" parquet:"rank,delta"`
	Host        string   `json:"host" parquet:"host"`
	PID         int64    `json:"pid" parquet:"pid,delta"`
	PPID        int64    `json:"ppid" parquet:"ppid,delta"`
	WorldSize   int64    `json:"world_size" parquet:"world_size,delta"`
	RankSource  string   `json:"rank_source" parquet:"rank_source"`
	Executable  string   `json:"executable" parquet:"executable"`
	Cmdline     []string `json:"cmdline" parquet:"cmdline,list"`
	ToolVersion string   `json:"tool_version" parquet:"tool_version"`
	ConfigPath  string   `json:"config_path" parquet:"config_path"`
	ConfigText  string   `json:"config_text" parquet:"config_text"`
	ClockSource string   `json:"clock_source" parquet:"clock_source"`
	WallStart   int64    `json:"wall_start_ns" parquet:"wall_start_ns,delta"`
	MonoStart   int64    `json:"mono_start_ns" parquet:"mono_start_ns,delta"`
	ClockOffset int64    `json:"clock_offset_ns" parquet:"clock_offset_ns,delta"`
	ClockError  int64    `json:"clock_error_ns" parquet:"clock_error_ns,delta"`
	Trace       string   `json:"trace" parquet:"trace"`
	Events      uint64   `json:"events" parquet:"events,delta"`
	Dropped     uint64   `json:"dropped" parquet:"dropped,delta"`
	Complete    bool     `json:"complete" parquet:"complete"`
	Damaged     int      `json:"damaged_parts" parquet:"damaged_parts,delta"`
}

// Info describes p; res (nil while the trace is still being read) adds the
// counts.
func Info(p *Process, res *Result) ProcessInfo {
	h := p.Header
	i := ProcessInfo{Rank: p.Rank, Host: h.Host, PID: h.PID, PPID: h.PPID, WorldSize: h.WorldSize, RankSource: h.RankSource,
		Executable: h.Executable, Cmdline: h.Cmdline, ToolVersion: h.ToolVersion, ConfigPath: h.ConfigPath,
		ConfigText: h.ConfigText, ClockSource: h.ClockSource, WallStart: h.WallStart, MonoStart: h.MonoStart, Trace: p.Path}
	if i.Cmdline == nil {
		i.Cmdline = []string{}
	}
	if p.toRef != nil {
		i.ClockOffset, i.ClockError = p.Clock[0].Offset, p.Clock[0].Error
		for _, c := range p.Clock[1:] {
			i.ClockError = max(i.ClockError, c.Error)
		}
	}
	if res != nil {
		i.Events, i.Dropped, i.Complete, i.Damaged = res.Events, res.Dropped(), res.Complete, len(res.Problems)
	}
	return i
}

// Processes is the process table, a row per trace (formats/table): its
// own files, processes/part-*-of-*.parquet or .csv, in a convert output
// directory; each Parquet file of the other tables carries its trace's row
// as JSON metadata too.
var Processes = table.Table[ProcessInfo]{Name: "processes", Columns: []table.Column{
	{Name: "rank", Field: "Rank", Type: table.Int64, Doc: "MPI rank (or input index)"},
	{Name: "host", Field: "Host", Type: table.String, Doc: "host name"},
	{Name: "pid", Field: "PID", Type: table.Int64, Doc: "process id"},
	{Name: "ppid", Field: "PPID", Type: table.Int64, Doc: "parent process id"},
	{Name: "world_size", Field: "WorldSize", Type: table.Int64, Doc: "MPI world size, 0 unknown"},
	{Name: "rank_source", Field: "RankSource", Type: table.String, Doc: "where the rank came from (the launcher's variable)"},
	{Name: "executable", Field: "Executable", Type: table.String, Doc: "the program"},
	{Name: "cmdline", Field: "Cmdline", Type: table.JSON, Doc: "the command line: a list (CSV: a JSON array)"},
	{Name: "tool_version", Field: "ToolVersion", Type: table.String, Doc: "the occa-tools version that wrote the trace"},
	{Name: "config_path", Field: "ConfigPath", Type: table.String, Doc: "the config file used"},
	{Name: "config_text", Field: "ConfigText", Type: table.String, Doc: "the config used"},
	{Name: "clock_source", Field: "ClockSource", Type: table.String, Doc: "the clock of the trace's times"},
	{Name: "wall_start_ns", Field: "WallStart", Type: table.Int64, Unit: "unix ns", Doc: "the wall time at the trace's start (the epoch)"},
	{Name: "mono_start_ns", Field: "MonoStart", Type: table.Int64, Unit: "ns", Doc: "CLOCK_MONOTONIC at the trace's start (the epoch)"},
	{Name: "clock_offset_ns", Field: "ClockOffset", Type: table.Int64, Unit: "ns", Doc: "rank 0's clock minus this trace's at MPI_Init, when its times are on rank 0's timeline (0 otherwise)"},
	{Name: "clock_error_ns", Field: "ClockError", Type: table.Int64, Unit: "ns", Doc: "the bound on the offsets' error at MPI_Init and MPI_Finalize (the larger)"},
	{Name: "trace", Field: "Trace", Type: table.String, Doc: "the input path"},
	{Name: "events", Field: "Events", Type: table.Uint64, Doc: "events read"},
	{Name: "dropped", Field: "Dropped", Type: table.Uint64, Doc: "events lost, from the trace's stats"},
	{Name: "complete", Field: "Complete", Type: table.Bool, Doc: "closed cleanly"},
	{Name: "damaged_parts", Field: "Damaged", Type: table.Int64, Doc: "chunks skipped with -salvage"},
}}
