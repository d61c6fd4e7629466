package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/libocca/occa-tools/runtime/procinfo"
)

// shard is the part of a run one invocation handles: the traces whose rank
// is i modulo n, so that every trace of a rank lands in the same shard and
// each shard gets about as many ranks, whatever the launcher's numbering.
type shard struct {
	i, n   int64
	source string // where i and n came from: "-shard", a launcher's variables, or "" (the whole run)
}

// wholeRun is the shard of an invocation that handles every trace.
var wholeRun = shard{0, 1, ""}

// pickShard reads -shard i/n (flag, "" when not given) or, without it, the
// rank and size that a launcher (srun, mpirun: the variables the runtime
// reads, procinfo) gives this process, so that `srun -n 8 occa-tools
// convert ...` splits the run eight ways.
func pickShard(flag string, env []string) (shard, error) {
	if flag != "" {
		is, ns, ok := strings.Cut(flag, "/")
		i, err1 := strconv.ParseInt(is, 10, 64)
		n, err2 := strconv.ParseInt(ns, 10, 64)
		if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n || n > procinfo.MaxRank+1 {
			return shard{}, usagef("-shard %q: want i/n with 0 <= i < n, e.g. -shard 3/8", flag)
		}
		return shard{i, n, "-shard"}, nil
	}
	rank, size, source := procinfo.Rank(env)
	if rank < 0 || size <= 1 {
		return wholeRun, nil
	}
	return shard{rank, size, source}, nil
}

// rankOf is the rank a trace is filed under: its header's, or for a trace
// without one (or whose header cannot be read) its position among the
// inputs, as analysis.Read numbers it. Every shard sees the same inputs, so
// every shard files a trace the same way.
func rankOf(h *traceID, index int) int64 {
	if h != nil && h.rank >= 0 {
		return h.rank
	}
	return int64(index)
}

// has reports whether the trace of rank belongs to s.
func (s shard) has(rank int64) bool { return rank%s.n == s.i }

// pick returns the indexes of the inputs that belong to s and, when the
// shard came from a launcher, says on w which part of the run this is: a
// job script that runs the tools outside srun but inside an allocation
// would otherwise handle a fraction of the run without a word.
func (s shard) pick(hdrs []*traceID, w io.Writer, cmd string) []int {
	var mine []int
	for i, h := range hdrs {
		if s.has(rankOf(h, i)) {
			mine = append(mine, i)
		}
	}
	if s.source != "" && s.source != "-shard" {
		fmt.Fprintf(w, "occa-tools %s: shard %d/%d (from %s): %d of the %d traces (the ranks that are %d modulo %d); -shard 0/1 takes them all\n",
			cmd, s.i, s.n, s.source, len(mine), len(hdrs), s.i, s.n)
	}
	return mine
}
