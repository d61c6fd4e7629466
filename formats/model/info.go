package model

// ProcessInfo describes one process (trace file) for the metadata table of
// the outputs (_processes.csv, and the Parquet key-value metadata).
type ProcessInfo struct {
	Rank        int64    `json:"rank"`
	Host        string   `json:"host"`
	PID         int64    `json:"pid"`
	PPID        int64    `json:"ppid"`
	WorldSize   int64    `json:"world_size"`
	RankSource  string   `json:"rank_source"`
	Executable  string   `json:"executable"`
	Cmdline     []string `json:"cmdline"`
	ToolVersion string   `json:"tool_version"`
	ConfigPath  string   `json:"config_path"`
	ConfigText  string   `json:"config_text"`
	ClockSource string   `json:"clock_source"`
	WallStart   int64    `json:"wall_start_ns"`
	MonoStart   int64    `json:"mono_start_ns"`
	Trace       string   `json:"trace"`
	Events      uint64   `json:"events"`
	Dropped     uint64   `json:"dropped"`
	Complete    bool     `json:"complete"`
	Damaged     int      `json:"damaged_parts"`
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
	if res != nil {
		i.Events, i.Dropped, i.Complete, i.Damaged = res.Events, res.Dropped(), res.Complete, len(res.Problems)
	}
	return i
}
