package main

import (
	"fmt"
	"runtime"
	"strconv"
	"time"

	"github.com/libocca/occa-tools/tests/cpuload"
)

// ---- Section 2b: the writer under CPU contention (tests/bench/README.md) ----------
//
// A fully subscribed node (one MPI rank per core) leaves the writer no idle
// core: it competes with the application. One CPU hog per core stands in
// for the other ranks; the throughput program runs untraced and traced
// (default config) at the same rate, interleaved, and the section prints
// what tracing costs the application (its time inside the bursts and its
// late bursts, against the untraced run) and what the writer could not
// keep up with (drops).

var contentionDur = 5 * time.Second

func contentionSection() error {
	hogs := runtime.NumCPU()
	secs := contentionDur.Seconds()
	fmt.Printf("\n== 2b. Contention: %d threads x %.1f M events/s (bursts of %d) for %.0f s with %d CPU hog(s), one per core\n",
		*threads, *rate/1e6, *burst, secs, hogs)
	stop := cpuload.Hogs(hogs)
	defer stop()
	args := []string{bin("throughput"), lib(), "--threads", strconv.Itoa(*threads), "--rate", fmt.Sprint(*rate),
		"--duration", fmt.Sprint(secs), "--burst", strconv.Itoa(*burst)}
	cfg, dir, err := writeConfig("contention", "")
	if err != nil {
		return err
	}
	// Untraced first, then traced: the hogs are the same in both.
	ur, err := runProg("", args...)
	if err != nil {
		return err
	}
	tr, err := runProg(cfg, args...)
	if err != nil {
		return err
	}
	ti, err := readTrace(dir)
	if err != nil {
		return err
	}
	um, tm := kv(ur.out), kv(tr.out)
	emitted := uint64(num(tm, "events_emitted"))
	inTrace := ti.runEvents()
	fmt.Printf("  %-34s %s                     %s\n", "", "untraced", "traced")
	fmt.Printf("  %-34s %-28s %s\n", "achieved rate (M events/s)",
		fmt.Sprintf("%.2f", num(um, "events_emitted")/num(um, "elapsed_s")/1e6),
		fmt.Sprintf("%.2f", float64(emitted)/num(tm, "elapsed_s")/1e6))
	fmt.Printf("  %-34s %-28s %s\n", "late bursts", um["late_bursts"]+" of "+um["bursts"], tm["late_bursts"]+" of "+tm["bursts"])
	ub, tb := num(um, "busy_ns_per_event"), num(tm, "busy_ns_per_event")
	fmt.Printf("  %-34s %-28s %s\n", "app threads, ns/event in bursts", fmt.Sprintf("%.2f", ub), fmt.Sprintf("%.2f", tb))
	fmt.Printf("  %-34s %-28s %s\n", "process CPU (s)", fmt.Sprintf("%.2f", ur.cpu.Seconds()), fmt.Sprintf("%.2f", tr.cpu.Seconds()))
	fmt.Printf("  %-34s x%.2f inside bursts (+%.2f ns/event); wall x%.3f (%.2f s untraced, %.2f s traced)\n",
		"application slowdown", tb/ub, tb-ub, num(tm, "elapsed_s")/num(um, "elapsed_s"), num(um, "elapsed_s"), num(tm, "elapsed_s"))
	// A dropped begin takes its end with it (the end is never emitted).
	missing := emitted - min(inTrace, emitted)
	fmt.Printf("  %-34s %d of %d in the trace; %.2f %% missing: %s dropped begins and their ends\n", "events",
		inTrace, emitted, float64(missing)/float64(max(emitted, 1))*100, ti.droppedText())
	wcpu := writerCPU(tr, tm, ur, um)
	fmt.Printf("  %-34s %.2f s = %.1f ns per event written (process CPU less the app's threads')\n", "writer + Go runtime CPU",
		wcpu, wcpu*1e9/float64(max(inTrace, 1)))
	return nil
}

// writerCPU is the traced run's CPU time outside the application's threads
// (the writer, the Go runtime, the final flush), less the same in the
// untraced run (loading the library), in seconds.
func writerCPU(traced result, tm map[string]string, untraced result, um map[string]string) float64 {
	return (traced.cpu.Seconds() - num(tm, "app_cpu_s")) - (untraced.cpu.Seconds() - num(um, "app_cpu_s"))
}
