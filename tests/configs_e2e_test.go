package tests

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/configs"
	"github.com/libocca/occa-tools/filters"
	"github.com/libocca/occa-tools/filters/config"
	"github.com/libocca/occa-tools/formats/trace"
)

// Every config in configs/ runs the workload; the trace must hold exactly
// what the reference model predicts. Configs whose outcome depends on thread
// interleaving (windows, budgets, signals) run one worker.
func TestConfigsEndToEnd(t *testing.T) {
	cases := []struct {
		file    string
		opt     options
		args    []string
		replace [][2]string // edits to the example, to fit a short run
	}{
		{file: "default.toml", opt: options{threads: 2, steps: 10}},
		{file: "kernels-by-name.toml", opt: options{threads: 2, steps: 10}},
		{file: "kernels-by-tag.toml", opt: options{threads: 2, steps: 10}},
		{file: "device-filter.toml", opt: options{threads: 2, steps: 10}},
		{file: "memory-filter.toml", opt: options{threads: 2, steps: 10}},
		{file: "memory-filter.toml", opt: options{threads: 2, steps: 10, tagMemory: true}, args: []string{"--tag-memory"}},
		{file: "minimal-overhead.toml", opt: options{threads: 2, steps: 10}},
		{file: "openmp.toml", opt: options{threads: 2, steps: 10}}, // no OpenMP in the workload: its launches
		{file: "launch-window.toml", opt: options{threads: 1, steps: 40}},
		{file: "region-window.toml", opt: options{threads: 1, steps: 20}},
		{file: "api-control.toml", opt: options{threads: 1, steps: 10, apiStart: true}, args: []string{"--api-pause"}},
		{file: "budget.toml", opt: options{threads: 1, steps: 10}},
		{file: "budget.toml", opt: options{threads: 1, steps: 10},
			replace: [][2]string{{"max_events = 1_000_000", "max_events = 157"}}},
		{file: "signal-toggle.toml", opt: options{threads: 1, steps: 20, toggleAt: []int{3, 8, 12}},
			args: []string{"--toggle-at", "3", "--toggle-at", "8", "--toggle-at", "12"}},
		// The example waits 30 s; in a short run no window opens.
		{file: "time-window.toml", opt: options{threads: 1, steps: 10}},
	}
	for _, c := range cases {
		name := c.file + strings.Join(c.args, "")
		if len(c.replace) > 0 {
			name += "(edited)"
		}
		t.Run(name, func(t *testing.T) {
			text := string(configs.All()[c.file])
			for _, r := range c.replace {
				if !strings.Contains(text, r[0]) {
					t.Fatalf("%s has no %q to replace", c.file, r[0])
				}
				text = strings.Replace(text, r[0], r[1], 1)
			}
			cfg, err := config.Parse(c.file, []byte(text))
			if err != nil {
				t.Fatal(err)
			}
			prog, err := filters.Compile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			want := predict(prog, c.opt)
			args := append([]string{"-t", strconv.Itoa(c.opt.threads), "-s", strconv.Itoa(c.opt.steps)}, c.args...)
			g := oneTrace(t, text, args...)
			if d := diffCounts(want.counts, g.counts); len(d) > 0 {
				t.Errorf("event counts differ from the model:\n  %s", strings.Join(d, "\n  "))
			}
			checkBytes(t, g, want)
			checkTriggers(t, g, want)
			checkOrder(t, g)
			for k, n := range g.counts { // the writer's own counts agree
				if uint64(n) != g.stats.Events[k] {
					t.Errorf("stats count %s = %d, events read %d", k, g.stats.Events[k], n)
				}
			}
			if d := g.stats.TotalDropped(); d != 0 {
				t.Errorf("dropped %d events", d)
			}
			if g.header.ConfigText != text {
				t.Errorf("header config text differs from the config used")
			}
		})
	}
}

func checkBytes(t *testing.T, g *got, want expect) {
	t.Helper()
	have := map[uint64]uint64{}
	for _, e := range g.events {
		if e.Kind == trace.CopyBegin {
			have[e.Args[1]&3] += e.Args[4]
		}
	}
	for _, dir := range []uint64{trace.CopyH2D, trace.CopyD2H, trace.CopyD2D} {
		if have[dir] != want.bytes[dir] {
			t.Errorf("%s bytes = %d, want %d", trace.CopyDirectionName(dir), have[dir], want.bytes[dir])
		}
	}
}

func checkTriggers(t *testing.T, g *got, want expect) {
	t.Helper()
	var have []filters.Action
	for _, e := range g.events {
		if e.Kind == trace.Trigger {
			have = append(have, filters.Action{Window: uint16(e.Args[0]), Action: e.Args[1], Cause: e.Args[2]})
		}
	}
	if len(have) == 0 && len(want.triggers) == 0 {
		return
	}
	if !reflect.DeepEqual(have, want.triggers) {
		t.Errorf("trigger events:\n got %v\nwant %v", have, want.triggers)
	}
}

// checkOrder: per thread, times never go back and begins and ends nest.
func checkOrder(t *testing.T, g *got) {
	t.Helper()
	last := map[uint32]int64{}
	open := map[uint32][]trace.Event{}
	for _, e := range g.events {
		if e.Time < last[e.Thread] {
			t.Fatalf("thread %d: %s at %d ns after an event at %d ns", e.Thread, e.Kind, e.Time, last[e.Thread])
		}
		last[e.Thread] = e.Time
		spec := e.Kind.Spec()
		if spec.Pair == trace.KindInvalid {
			continue
		}
		if spec.Begin {
			open[e.Thread] = append(open[e.Thread], e)
			continue
		}
		stack := open[e.Thread]
		if len(stack) == 0 {
			t.Fatalf("thread %d: %s (corr %d) without a begin", e.Thread, e.Kind, e.Args[0])
		}
		b := stack[len(stack)-1]
		if b.Kind.Spec().Pair != e.Kind || b.Args[0] != e.Args[0] {
			t.Fatalf("thread %d: %s (corr %d) closes %s (corr %d)", e.Thread, e.Kind, e.Args[0], b.Kind, b.Args[0])
		}
		open[e.Thread] = stack[:len(stack)-1]
	}
	for th, stack := range open {
		if len(stack) > 0 {
			t.Errorf("thread %d: %d calls never ended (first %s)", th, len(stack), stack[0].Kind)
		}
	}
}

// Every example config parses and compiles (also checked in filters/config;
// here against the runtime's own reading of the file).
func TestConfigsLoad(t *testing.T) {
	files, _ := filepath.Glob("../configs/*.toml")
	if len(files) < 10 {
		t.Fatalf("only %d example configs", len(files))
	}
	for _, f := range files {
		text, _ := os.ReadFile(f)
		cfg, err := config.Parse(f, text)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if _, err := filters.Compile(cfg); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
