package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/trace"
)

// openTrace opens a trace file for a command.
func openTrace(path string, salvage bool) (*trace.Reader, io.Closer, error) {
	r, c, err := trace.Open(path, trace.WithSalvage(salvage))
	if err != nil {
		return nil, nil, explain(err)
	}
	return r, c, nil
}

// explain adds to a trace error what the user can do about it.
func explain(err error) error {
	var te *trace.Error
	switch {
	case !errors.As(err, &te):
		return err
	case errors.Is(err, trace.ErrNoFinalStats):
		return fmt.Errorf("%w (if it is still running, wait for it to exit)", err)
	case te.Truncated():
		return fmt.Errorf("%w (the file was cut short; nothing after the cut can be recovered)", err)
	case te.Chunk >= 0:
		return fmt.Errorf("%w (run again with -salvage to skip the damaged part and read the rest)", err)
	}
	return err
}

// reportSalvage tells what a salvaging reader skipped.
func reportSalvage(env *Env, path string, r *trace.Reader) {
	if len(r.Problems()) == 0 {
		return
	}
	fmt.Fprintf(env.Stderr, "%s: salvaged: skipped %d damaged bytes, %d problems:\n", path, r.Skipped(), len(r.Problems()))
	for _, p := range r.Problems() {
		fmt.Fprintf(env.Stderr, "\t%v\n", p)
	}
}

// reportLeftOut says that n of the trace's definitions were not kept
// (trace.MaxDictText): only a file made to exhaust a reader's memory has
// so many.
func reportLeftOut(env *Env, path string, n int) {
	if n == 0 {
		return
	}
	fmt.Fprintf(env.Stderr, "%s: %s\n", path, leftOutText(n))
}

// leftOutText says what n definitions not kept mean.
func leftOutText(n int) string {
	return fmt.Sprintf("%d definitions not kept, past %d MiB of names, %d names or %d tags of one kernel: "+
		"the names they define read as string#ID. No trace of the occa-tools runtime holds so many; check where this file came from",
		n, trace.MaxDictText>>20, trace.MaxDictStrings, trace.MaxKernelTags)
}

// traceID is what tells two traces of one process apart from traces of
// two: the host, pid and rank, and the wall-clock start (a pid comes back
// in a later run). It is all the commands keep of a header while they read
// the traces: 10,000 whole headers (config text, command line, kinds) take
// hundreds of MiB.
type traceID struct {
	host      string
	pid, rank int64
	start     int64
}

// readHeaders reads the header of each trace (nil where it cannot be read:
// the command reports that file when it reads it) and refuses inputs that
// hold one process's trace twice (a path given twice, a run directory and
// a file in it, a copy): the summary and convert would count it twice. The
// error names both files. It also returns rank 0's epoch, to which the
// traces of an MPI run are aligned (nil without a rank 0).
func readHeaders(paths []string) ([]*traceID, *analysis.Reference, error) {
	hdrs := make([]*traceID, len(paths))
	var ref *analysis.Reference
	seen := make(map[traceID]string, len(paths))
	for i, p := range paths {
		r, c, err := trace.Open(p)
		if err != nil {
			continue
		}
		h := r.Header()
		c.Close()
		k := traceID{h.Host, h.PID, h.Rank, h.WallStart}
		if first, ok := seen[k]; ok {
			return nil, nil, fmt.Errorf("%s and %s hold the same process's trace (host %s, pid %d, rank %d, same start): give each trace once", first, p, h.Host, h.PID, h.Rank)
		}
		seen[k] = p
		hdrs[i] = &k
		if h.Rank == 0 && ref == nil {
			ref = &analysis.Reference{MonoStart: h.MonoStart, WallStart: h.WallStart}
		}
	}
	return hdrs, ref, nil
}

// rankPaths places each input's output file (path) after its rank
// (rankOf), numbering the traces of one rank in input order, so that they
// get the same names in every run and every shard.
func rankPaths(hdrs []*traceID, path func(rank int64, dup int) string) []string {
	names := make([]string, len(hdrs))
	dups := make(map[int64]int, len(hdrs))
	for i, h := range hdrs {
		rank := rankOf(h, i)
		names[i] = path(rank, dups[rank])
		dups[rank]++
	}
	return names
}
