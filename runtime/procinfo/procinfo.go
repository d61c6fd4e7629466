// Package procinfo gathers what a trace header says about its process (host,
// pid, MPI rank, command line) and names trace files so that ranks, hosts and
// pids of one job never collide.
package procinfo

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Info describes the traced process.
type Info struct {
	Host       string
	PID        int
	PPID       int
	Rank       int64 // -1 when no launcher variable names one
	WorldSize  int64 // -1 when none
	RankSource string
	Executable string
	Cmdline    []string
}

// launchers lists (rank variable, size variable) pairs in the order they are
// trusted: a process started by Open MPI under Slurm has both, and the MPI
// launcher's own numbering is the one MPI_Comm_rank reports.
var launchers = [][2]string{
	{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, // Open MPI
	{"PMIX_RANK", "PMIX_SIZE"},                       // PMIx (Open MPI 5, others)
	{"PMI_RANK", "PMI_SIZE"},                         // MPICH, Intel MPI (Hydra)
	{"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"},   // MVAPICH2
	{"PALS_RANKID", "PALS_NRANKS"},                   // HPE PALS (Aurora, Polaris)
	{"SLURM_PROCID", "SLURM_NTASKS"},                 // srun
	{"FLUX_TASK_RANK", "FLUX_JOB_SIZE"},              // Flux
}

// Rank returns the process's rank and world size from launcher variables in
// env (as os.Environ gives it), the variable used, or -1, -1, "".
func Rank(env []string) (rank, size int64, source string) {
	get := func(name string) (string, bool) {
		for _, kv := range env {
			if strings.HasPrefix(kv, name+"=") {
				return kv[len(name)+1:], true
			}
		}
		return "", false
	}
	for _, l := range launchers {
		v, ok := get(l[0])
		if !ok {
			continue
		}
		r, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || r < 0 {
			continue
		}
		size = -1
		if s, ok := get(l[1]); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil && n > 0 {
				size = n
			}
		}
		return r, size, l[0]
	}
	return -1, -1, ""
}

// Current describes this process.
func Current() Info {
	host, _ := os.Hostname()
	if host == "" {
		host = "unknown-host"
	}
	rank, size, src := Rank(os.Environ())
	exe, _ := os.Executable()
	return Info{
		Host:       host,
		PID:        os.Getpid(),
		PPID:       os.Getppid(),
		Rank:       rank,
		WorldSize:  size,
		RankSource: src,
		Executable: exe,
		Cmdline:    cmdline(),
	}
}

func cmdline() []string {
	b, err := os.ReadFile("/proc/self/cmdline")
	if err != nil || len(b) == 0 {
		return os.Args
	}
	parts := bytes.Split(bytes.TrimSuffix(b, []byte{0}), []byte{0})
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = string(p)
	}
	return out
}

// ExeName is the base name of the executable, the command line's first word
// when the executable is unknown.
func (i *Info) ExeName() string {
	name := filepath.Base(i.Executable)
	if i.Executable == "" && len(i.Cmdline) > 0 {
		name = filepath.Base(i.Cmdline[0])
	}
	if name == "" || name == "." || name == "/" {
		return "process"
	}
	return name
}
