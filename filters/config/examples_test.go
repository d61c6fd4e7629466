package config_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/libocca/occa-tools/configs"
	"github.com/libocca/occa-tools/filters"
	"github.com/libocca/occa-tools/filters/config"
	"github.com/libocca/occa-tools/formats/trace"
)

// Every file in configs/ parses without error, compiles, says how to use
// it, and has the values it promises.
func TestExamples(t *testing.T) {
	checks := map[string]func(t *testing.T, c *config.Config, p *filters.Program){
		"default.toml": func(t *testing.T, c *config.Config, p *filters.Program) {
			if len(p.Windows()) != 0 || p.StartPaused() || p.ToggleSignal() != 0 {
				t.Error("default has triggers")
			}
			if p.EventMask()&(1<<trace.DeviceTime) != 0 || p.EventMask()&(1<<trace.RunBegin) == 0 {
				t.Errorf("mask %#x", p.EventMask())
			}
		},
		"kernels-by-name.toml": func(t *testing.T, c *config.Config, p *filters.Program) {
			for name, want := range map[string]bool{"axpy": true, "gemm_64": true, "gemm_64_debug": false,
				"reduce_sum": true, "reduce_sum2": false, "axpy2": false} {
				if got := p.Kernel(name, "").Selected; got != want {
					t.Errorf("kernel %s selected %v, want %v", name, got, want)
				}
			}
		},
		"kernels-by-tag.toml": func(t *testing.T, c *config.Config, p *filters.Program) {
			d := p.Kernel("axpy_v2", "")
			if !d.Selected || !reflect.DeepEqual(d.Tags, []string{"hot"}) {
				t.Errorf("axpy_v2: %+v", d)
			}
			if d := p.Kernel("gemm_12", ""); !d.Selected {
				t.Errorf("gemm_12: %+v", d)
			}
			if d := p.Kernel("axpy_warmup", ""); d.Selected || !reflect.DeepEqual(d.Tags, []string{"hot", "warmup"}) {
				t.Errorf("axpy_warmup: %+v", d)
			}
			if d := p.Kernel("other", "{occa_tools_tag: ['solver', 'hot']}"); !d.Selected {
				t.Errorf("tagged by properties: %+v", d)
			}
			if p.Kernel("other", "").Selected {
				t.Error("untagged kernel selected")
			}
		},
		"device-filter.toml": func(t *testing.T, c *config.Config, p *filters.Program) {
			if d := p.Device("cuda", 1, ""); !d.Selected || !d.MemorySelected {
				t.Errorf("cuda 1: %+v", d)
			}
			if d := p.Device("CUDA", 2, ""); d.Selected {
				t.Errorf("cuda 2: %+v", d)
			}
			if d := p.Device("Serial", 0, ""); d.Selected {
				t.Errorf("serial: %+v", d)
			}
		},
		"memory-filter.toml": func(t *testing.T, c *config.Config, p *filters.Program) {
			if min, max := p.MemorySizeRange(); min != 1<<20 || max != 2<<30 {
				t.Errorf("range %d..%d", min, max)
			}
			if !p.MemoryTagSelected("halo") || p.MemoryTagSelected("") || p.MemoryTagSelected("tmp") {
				t.Error("memory tags")
			}
			if d := p.Device("HIP", 1, ""); !d.Selected || d.MemorySelected {
				t.Errorf("device 1: %+v", d)
			}
		},
		"launch-window.toml": func(t *testing.T, c *config.Config, p *filters.Program) {
			w := p.Windows()
			if len(w) != 1 || w[0].Kind != filters.WindowLaunch || w[0].From != 100 || w[0].To != 110 || w[0].Kernel != "axpy" {
				t.Errorf("windows %+v", w)
			}
			if p.Kernel("axpy", "").Windows != 1 || p.Kernel("axpy2", "").Windows != 0 {
				t.Error("window mask")
			}
		},
		"region-window.toml": func(t *testing.T, c *config.Config, p *filters.Program) {
			w := p.Windows()
			if len(w) != 1 || w[0].Kind != filters.WindowRegion || w[0].From != 10 || w[0].To != 12 {
				t.Errorf("windows %+v", w)
			}
			if p.Region("timestep") != 1 || p.Region("solve") != 0 {
				t.Error("region mask")
			}
		},
		"time-window.toml": func(t *testing.T, c *config.Config, p *filters.Program) {
			w := p.Windows()
			if len(w) != 1 || w[0].Kind != filters.WindowTime || w[0].Delay != 30*time.Second || w[0].Duration != 10*time.Second {
				t.Errorf("windows %+v", w)
			}
		},
		"signal-toggle.toml": func(t *testing.T, c *config.Config, p *filters.Program) {
			if p.ToggleSignal() != config.SigUSR2 || !p.StartPaused() {
				t.Errorf("signal %d paused %v", p.ToggleSignal(), p.StartPaused())
			}
			m := p.NewMachine()
			if m.Recording() || !m.Step(filters.Signal()).Recording || m.Step(filters.Signal()).Recording {
				t.Error("the first signal does not start recording, or the second does not stop it")
			}
		},
		"api-control.toml": func(t *testing.T, c *config.Config, p *filters.Program) {
			if !p.StartPaused() || p.ToggleSignal() != 0 {
				t.Error("not start_paused")
			}
		},
		"budget.toml": func(t *testing.T, c *config.Config, p *filters.Program) {
			if ev, by := p.Budget(); ev != 1_000_000 || by != 256<<20 {
				t.Errorf("budget %d %d", ev, by)
			}
		},
		"openmp.toml": func(t *testing.T, c *config.Config, p *filters.Program) {
			if !p.OpenMPAll() {
				t.Error("scope is not all")
			}
			m := p.EventMask()
			if m&(1<<trace.OmpParallelBegin) == 0 || m&(1<<trace.OmpTaskDependence) == 0 || m&(1<<trace.RunBegin) == 0 ||
				m&(1<<trace.OmpTaskDepend) != 0 || m&(1<<trace.CopyBegin) != 0 {
				t.Errorf("mask %#x", m)
			}
		},
		"minimal-overhead.toml": func(t *testing.T, c *config.Config, p *filters.Program) {
			want := uint64(1)<<trace.RunBegin | 1<<trace.RunEnd | 1<<trace.Dropped | 1<<trace.Trigger | 1<<trace.Fork
			if p.EventMask() != want {
				t.Errorf("mask %#x, want %#x", p.EventMask(), want)
			}
			if c.Output.Compression != config.CompressionFastest || c.Output.OnFull != config.OnFullDrop || c.Log.Level != config.LevelError {
				t.Errorf("output %+v", c.Output)
			}
		},
	}
	all := configs.All()
	for name, text := range all {
		t.Run(name, func(t *testing.T) {
			c, err := config.Parse("configs/"+name, text)
			if err != nil {
				t.Fatal(err)
			}
			p, err := filters.Compile(c)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(text), "#") || !strings.Contains(string(text), "OCCA_TOOLS_CONFIG=configs/"+name+" ") {
				t.Errorf("does not start with a comment showing OCCA_TOOLS_CONFIG=configs/%s", name)
			}
			check := checks[name]
			if check == nil {
				t.Fatalf("no checks for %s: add them to TestExamples", name)
			}
			check(t, c, p)
		})
	}
	for name := range checks {
		if all[name] == nil {
			t.Errorf("configs/%s is missing", name)
		}
	}
	if string(configs.Default) != string(all["default.toml"]) {
		t.Error("configs.Default is not default.toml")
	}
}
