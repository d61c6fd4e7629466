package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/libocca/occa-tools/filters/config"
)

func TestWithDeviceTime(t *testing.T) {
	def, err := os.ReadFile("../../configs/default.toml")
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"default.toml":       string(def),
		"empty":              "",
		"no events table":    "[output]\nmemory = \"8MiB\"",
		"events without key": "[events]\nenable = [\"kernel\"]\n\n[log]\nlevel = \"warn\"\n",
		"key false":          "[events]\ndevice_time = false # off\n",
		"events last":        "on_error = \"continue\"\n[ events ]",
	} {
		out := withDeviceTime(text)
		cfg, err := config.Parse(name, []byte(out))
		if err != nil {
			t.Errorf("%s: the merged config does not parse: %v\n%s", name, err, out)
			continue
		}
		if !cfg.Events.DeviceTime {
			t.Errorf("%s: device_time is not on:\n%s", name, out)
		}
		if strings.Count(out, "device_time =") != 1 {
			t.Errorf("%s: want one device_time key:\n%s", name, out)
		}
	}
	// The rest of the config is kept.
	cfg, err := config.Parse("x", []byte(withDeviceTime("[events]\nenable = [\"kernel\"]\n[output]\nmemory = \"8MiB\"\n")))
	if err != nil || cfg.Output.Memory != 8<<20 {
		t.Errorf("lost the other keys: %v %+v", err, cfg)
	}
}

func TestChildEnv(t *testing.T) {
	env := childEnv([]string{"PATH=/bin", "LD_PRELOAD=/u/a.so /u/b.so", "OCCA_TOOLS_CONFIG=/old"},
		"/c.toml", "/out", "/p/lib/libocca_tools_preload.so")
	want := []string{"PATH=/bin", "ASAN_OPTIONS=verify_asan_link_order=0", "OCCA_TOOLS_CONFIG=/c.toml", "OCCA_TOOLS_OUTPUT_DIR=/out",
		"LD_PRELOAD=/p/lib/libocca_tools_preload.so:/u/a.so /u/b.so"}
	if strings.Join(env, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q\nwant %q", env, want)
	}
	env = childEnv([]string{"LD_PRELOAD="}, "/c", "/o", "/s.so")
	if env[len(env)-1] != "LD_PRELOAD=/s.so" {
		t.Errorf("empty LD_PRELOAD: %q", env)
	}
	// The user's ASan options are kept; an explicit link-order choice wins.
	for in, want := range map[string]string{
		"ASAN_OPTIONS=detect_leaks=0":                  "ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0",
		"ASAN_OPTIONS=verify_asan_link_order=1:halt=1": "ASAN_OPTIONS=verify_asan_link_order=1:halt=1",
		"ASAN_OPTIONS=":                                "ASAN_OPTIONS=verify_asan_link_order=0",
	} {
		if env := childEnv([]string{in}, "/c", "/o", "/s.so"); env[0] != want {
			t.Errorf("%s: got %q, want %q first", in, env, want)
		}
	}
}

func TestParseArgs(t *testing.T) {
	o, err := parseArgs([]string{"--quiet", "--output", "d", "./app", "--quiet", "-x"})
	if err != nil || !o.quiet || o.output != "d" || strings.Join(o.argv, " ") != "./app --quiet -x" {
		t.Errorf("got %+v %v", o, err)
	}
	o, err = parseArgs([]string{"--", "--weird-name"})
	if err != nil || o.argv[0] != "--weird-name" {
		t.Errorf("after --: %+v %v", o, err)
	}
	if _, err := parseArgs([]string{"--quiet"}); err == nil {
		t.Errorf("no program: want an error")
	}
}

func TestOfPID(t *testing.T) {
	got := ofPID([]string{"/d/app-h-r0-p12.occatrace", "/d/app-h-r0-p123.occatrace", "/d/app-h-rx-p12-x.occatrace"}, 12)
	if len(got) != 2 || got[0] != "/d/app-h-r0-p12.occatrace" {
		t.Errorf("got %v", got)
	}
}

// A config that is a named pipe is refused at once instead of blocking
// occa-prof before it starts the program.
func TestConfigFileNamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.toml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := configFile(&options{config: fifo}, &install{})
		done <- err
	}()
	select {
	case err := <-done:
		want := "config: open " + fifo + ": a named pipe, not a regular file; give the path of a TOML file"
		if err == nil || err.Error() != want {
			t.Errorf("error = %v\nwant %s", err, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("configFile blocked on a named pipe")
	}
}

func TestMpiEnv(t *testing.T) {
	env := mpiEnv([]string{"PATH=/bin", "OCCA_TOOLS_TARGET_LIB=libfoo.so"})
	want := []string{"PATH=/bin", "OCCA_TOOLS_TARGET_LIB=libfoo.so:libmpi.so:libmpich.so:libmpi_cray.so"}
	if strings.Join(env, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q\nwant %q", env, want)
	}
	env = mpiEnv([]string{"OCCA_TOOLS_TARGET_LIB= "})
	if strings.Join(env, "\n") != "OCCA_TOOLS_TARGET_LIB=libocca.so:libmpi.so:libmpich.so:libmpi_cray.so" {
		t.Errorf("empty target list: %q", env)
	}
}
