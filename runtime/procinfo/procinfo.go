// Package procinfo gathers what a trace header says about its process (host,
// pid, MPI rank, command line) and names trace files so that ranks, hosts and
// pids of one job never collide.
package procinfo

import (
	"bytes"
	"fmt"
	"math"
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
	// Ignored says, one line each, which launcher variables held something
	// that is not a rank or a size, and were ignored.
	Ignored []string
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

// MaxRank is the largest rank a launcher variable may give: MPI numbers
// ranks with C ints.
const MaxRank = math.MaxInt32

// Rank returns the process's rank and world size from launcher variables in
// env (as os.Environ gives it), the variable used, or -1, -1, "".
func Rank(env []string) (rank, size int64, source string) {
	rank, size, source, _ = readRank(env)
	return
}

// readRank is Rank, and a message for each variable it ignored: a rank
// that is not a whole number 0..MaxRank (the next launcher's is tried), a
// size that is not 1..MaxRank+1 or not above the rank (the size is unknown).
func readRank(env []string) (rank, size int64, source string, ignored []string) {
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
		if err != nil || r < 0 || r > MaxRank {
			ignored = append(ignored, fmt.Sprintf("%s=%s is not a rank (a whole number 0..%d); ignored", l[0], Quote(v), MaxRank))
			continue
		}
		size = -1
		if s, ok := get(l[1]); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			switch {
			case err != nil || n < 1 || n > MaxRank+1:
				ignored = append(ignored, fmt.Sprintf("%s=%s is not a world size (a whole number 1..%d); ignored", l[1], Quote(s), int64(MaxRank)+1))
			case r >= n:
				ignored = append(ignored, fmt.Sprintf("%s=%d is not above %s=%d; the world size is ignored", l[1], n, l[0], r))
			default:
				size = n
			}
		}
		return r, size, l[0], ignored
	}
	return -1, -1, "", ignored
}

// Quote shows an environment variable's value in a message: quoted,
// escaped, and cut after 32 bytes.
func Quote(v string) string {
	if len(v) > 32 {
		return strconv.Quote(v[:32]) + "..."
	}
	return strconv.Quote(v)
}

// Current describes this process.
func Current() Info {
	host, _ := os.Hostname()
	if host == "" {
		host = "unknown-host"
	}
	rank, size, src, ignored := readRank(os.Environ())
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
		Ignored:    ignored,
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
