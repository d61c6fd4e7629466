package main

import (
	"fmt"

	"github.com/libocca/occa-tools/formats/trace"
)

var cmdDump = &Command{
	UsageLine: "dump [-n N] [-salvage] trace...",
	Short:     "print traces as text, one record per line",
	Long: `
Dump prints each trace as text: the header as "header key=value" lines, then
one line per record in file order, with ids resolved to names:

	0.001010000 t0 run_begin corr=5 kernel=1(axpy) device=1(CUDA:0) stream=0

Times are seconds since the trace started (the header's mono_start), to the
nanosecond; "t0" is the thread index. Definitions print as def_* lines,
clock sync points as a "clock" line and counters as a "stats" line.

With several traces, each starts with a "# file <path>" line.

A broken or cut trace prints everything before the damage, then the error
on stderr; exit status 1. With -salvage, dump skips damaged chunks, prints
what is left and lists what it skipped on stderr.
`,
}

var (
	dumpN       = cmdDump.Flag.Int("n", -1, "print at most `N` records of each trace (all when negative)")
	dumpSalvage = cmdDump.Flag.Bool("salvage", false, "skip damaged chunks and print what is left")
)

func init() { cmdDump.Run = runDump }

func runDump(env *Env, cmd *Command, args []string) error {
	if len(args) == 0 {
		return usagef("no trace files given")
	}
	failed := false
	for _, path := range args {
		if len(args) > 1 {
			fmt.Fprintf(env.Stdout, "# file %s\n", path)
		}
		if err := dumpOne(env, path); err != nil {
			fmt.Fprintf(env.Stderr, "occa-tools dump: %v\n", err)
			failed = true
		}
	}
	if failed {
		return errSilent
	}
	return nil
}

func dumpOne(env *Env, path string) error {
	r, c, err := openTrace(path, *dumpSalvage)
	if err != nil {
		return err
	}
	defer c.Close()
	err = trace.DumpN(env.Stdout, r, *dumpN)
	reportLeftOut(env, path, r.Dict().LeftOut())
	if err != nil {
		return fmt.Errorf("%s: %w", path, explain(err))
	}
	reportSalvage(env, path, r)
	return nil
}
