package config

import (
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/rs/zerolog"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		err  string
	}{
		{"4096", 4096, ""},
		{"0", 0, ""},
		{"64MiB", 64 << 20, ""},
		{"1 GiB", 1 << 30, ""},
		{"512KiB", 512 << 10, ""},
		{"512kib", 512 << 10, ""},
		{" 2 TiB ", 2 << 40, ""},
		{"1.5GiB", 3 << 29, ""},
		{"100B", 100, ""},
		{"0.5KiB", 512, ""},
		{"16777216TiB", 0, `bad size "16777216TiB": too large`},
		{"18446744073709551615", 1<<64 - 1, ""},
		{"18446744073709551616", 0, `bad size "18446744073709551616": too large`},
		{"0.3KiB", 0, `bad size "0.3KiB": not a whole number of bytes`},
		{"64MB", 0, `bad size "64MB": unit "MB" is not one of B, KiB, MiB, GiB, TiB`},
		{"64 M", 0, `bad size "64 M": unit "M" is not one of B, KiB, MiB, GiB, TiB`},
		{"", 0, `bad size "": want a number of bytes, optionally with a unit B, KiB, MiB, GiB or TiB ("64MiB")`},
		{"MiB", 0, `bad size "MiB": want a number of bytes, optionally with a unit B, KiB, MiB, GiB or TiB ("64MiB")`},
		{"1.2.3MiB", 0, `bad size "1.2.3MiB": want a number of bytes, optionally with a unit B, KiB, MiB, GiB or TiB ("64MiB")`},
		{".", 0, `bad size ".": want a number of bytes, optionally with a unit B, KiB, MiB, GiB or TiB ("64MiB")`},
		{"-1", 0, `bad size "-1": want a number of bytes, optionally with a unit B, KiB, MiB, GiB or TiB ("64MiB")`},
	} {
		got, err := ParseSize(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ParseSize(%q) error = %v, want %s", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[uint64]string{0: "0B", 1: "1B", 1000: "1000B", 1024: "1KiB", 1536: "1536B",
		64 << 20: "64MiB", 16 << 30: "16GiB", 3 << 40: "3TiB", 1 << 50: "1024TiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
		if back, err := ParseSize(FormatSize(n)); err != nil || back != n {
			t.Errorf("ParseSize(FormatSize(%d)) = %d, %v", n, back, err)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0s", 10 * time.Millisecond: "10ms", time.Minute: "60s",
		1500 * time.Microsecond: "1500us", 7: "7ns", 600 * time.Second: "600s"} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestParseSignal(t *testing.T) {
	for _, tc := range []struct {
		in    string
		num   int
		canon string
		err   string
	}{
		{"", 0, "", ""},
		{"SIGUSR1", 10, "SIGUSR1", ""},
		{"USR2", 12, "SIGUSR2", ""},
		{"sigusr2", 12, "SIGUSR2", ""},
		{"SIGRTMIN", 34, "SIGRTMIN+0", ""},
		{"SIGRTMIN+0", 34, "SIGRTMIN+0", ""},
		{"RTMIN+8", 42, "SIGRTMIN+8", ""},
		{"SIGRTMIN+9", 0, "", `"SIGRTMIN+9" is out of range; allowed: SIGUSR1, SIGUSR2, SIGRTMIN+N (N 0..8)`},
		{"SIGRTMIN+-1", 0, "", `"SIGRTMIN+-1" is out of range; allowed: SIGUSR1, SIGUSR2, SIGRTMIN+N (N 0..8)`},
		{"SIGRTMIN++1", 0, "", `"SIGRTMIN++1" is out of range; allowed: SIGUSR1, SIGUSR2, SIGRTMIN+N (N 0..8)`},
		{"SIGRTMIN+x", 0, "", `"SIGRTMIN+x" is out of range; allowed: SIGUSR1, SIGUSR2, SIGRTMIN+N (N 0..8)`},
		{"SIGKILL", 0, "", `"SIGKILL" cannot be used; allowed: SIGUSR1, SIGUSR2, SIGRTMIN+N (N 0..8)`},
		{"STOP", 0, "", `"STOP" cannot be used; allowed: SIGUSR1, SIGUSR2, SIGRTMIN+N (N 0..8)`},
		{"SIGSEGV", 0, "", `"SIGSEGV" cannot be used; allowed: SIGUSR1, SIGUSR2, SIGRTMIN+N (N 0..8)`},
		{"SIGINT", 0, "", `"SIGINT" cannot be used; allowed: SIGUSR1, SIGUSR2, SIGRTMIN+N (N 0..8)`},
		{"SIGRTMAX-1", 0, "", `"SIGRTMAX-1" cannot be used; allowed: SIGUSR1, SIGUSR2, SIGRTMIN+N (N 0..8)`},
		{"SIGFOO", 0, "", `"SIGFOO" is not a signal name; allowed: SIGUSR1, SIGUSR2, SIGRTMIN+N (N 0..8)`},
		{"12", 0, "", `"12" is not a signal name; allowed: SIGUSR1, SIGUSR2, SIGRTMIN+N (N 0..8)`},
	} {
		num, canon, err := ParseSignal(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ParseSignal(%q) error = %v, want %s", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || num != tc.num || canon != tc.canon {
			t.Errorf("ParseSignal(%q) = %d, %q, %v; want %d, %q", tc.in, num, canon, err, tc.num, tc.canon)
		}
	}
}

func TestParseLevel(t *testing.T) {
	for in, want := range map[string]zerolog.Level{"trace": zerolog.TraceLevel, "DEBUG": zerolog.DebugLevel,
		"Info": zerolog.InfoLevel, "warn": zerolog.WarnLevel, "error": zerolog.ErrorLevel, "disabled": zerolog.Disabled} {
		got, err := ParseLevel(in)
		if err != nil || zerolog.Level(got) != want {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v", in, got, err, want)
		}
		if got.String() != want.String() {
			t.Errorf("Level(%d).String() = %q, zerolog says %q", got, got, want)
		}
	}
	for in, msg := range map[string]string{
		"warning": `"warning" is not one of trace, debug, info, warn, error, disabled`,
		"wran":    `"wran" is not one of trace, debug, info, warn, error, disabled (did you mean warn?)`,
		"":        `"" is not one of trace, debug, info, warn, error, disabled`,
		"fatal":   `"fatal" is not one of trace, debug, info, warn, error, disabled`,
	} {
		if _, err := ParseLevel(in); err == nil || err.Error() != msg {
			t.Errorf("ParseLevel(%q) error = %v, want %s", in, err, msg)
		}
	}
}

func TestEnumsMatchLibraries(t *testing.T) {
	for c, z := range map[Compression]zstd.EncoderLevel{CompressionFastest: zstd.SpeedFastest,
		CompressionDefault: zstd.SpeedDefault, CompressionBetter: zstd.SpeedBetterCompression, CompressionBest: zstd.SpeedBestCompression} {
		if zstd.EncoderLevel(c) != z {
			t.Errorf("Compression %v = %d, zstd level %v = %d", c, c, z, z)
		}
		if ok, lvl := zstd.EncoderLevelFromString(c.String()); !ok || lvl != z {
			t.Errorf("zstd does not know %q as %v", c, z)
		}
	}
	for _, s := range []interface{ String() string }{OnError(9), Compression(0), OnFull(9), ClockSource(9), Level(5)} {
		if s.String() == "" {
			t.Errorf("%#v has an empty name", s)
		}
	}
	if OnErrorAbort.String() != "abort" || OnFullWait.String() != "wait" || ClockTSC.String() != "tsc" {
		t.Error("enum names")
	}
}

func TestValidateName(t *testing.T) {
	for in, want := range map[string]string{
		"{exe}-{host}-r{rank}-p{pid}":   "",
		"{pid}":                         "",
		"trace-{time}-{pid}.x":          "",
		"":                              "must not be empty",
		"{exe}-{rank}":                  `"{exe}-{rank}" must contain {pid}`,
		"{exe}-{user}-{pid}":            `unknown token {user} in "{exe}-{user}-{pid}"; allowed: {exe} {host} {pid} {rank} {time}`,
		"{PID}":                         `unknown token {PID} in "{PID}"; allowed: {exe} {host} {pid} {rank} {time}`,
		"{}{pid}":                       `unknown token {} in "{}{pid}"; allowed: {exe} {host} {pid} {rank} {time}`,
		"a/{pid}":                       `"a/{pid}" must not contain '/' (put directories in output.directory)`,
		"a\x00{pid}":                    `"a\x00{pid}" must not contain a NUL byte (no file name can)`,
		"{pid":                          `unclosed '{' in "{pid"`,
		"{ex{pid}":                      `unclosed '{' in "{ex{pid}"`,
		"pid}{pid}":                     `unmatched '}' in "pid}{pid}"`,
		"{exe}{exe}{pid}{pid}{rank}{x}": `unknown token {x} in "{exe}{exe}{pid}{pid}{rank}{x}"; allowed: {exe} {host} {pid} {rank} {time}`,
	} {
		err := ValidateName(in)
		if (err == nil) != (want == "") || err != nil && err.Error() != want {
			t.Errorf("ValidateName(%q) = %v, want %q", in, err, want)
		}
	}
}

func TestExpandName(t *testing.T) {
	at := time.Date(2026, 11, 22, 3, 4, 5, 0, time.FixedZone("x", 3600))
	v := NameVars{Exe: "my/app", Host: "node1", PID: 4242, Rank: -1, Time: at}
	if got := ExpandName("{exe}-{host}-r{rank}-p{pid}-{time}", v); got != "my_app-node1-rx-p4242-20261122T020405" {
		t.Errorf("got %q", got)
	}
	v.Rank = 7
	if got := ExpandName("{rank}.{pid}.{pid}", v); got != "7.4242.4242" {
		t.Errorf("got %q", got)
	}
}

func TestSuggest(t *testing.T) {
	cands := []string{"names", "regex", "tags", "exclude_names", "exclude_regex", "exclude_tags"}
	for in, want := range map[string]string{"name": "names", "Names": "names", "regx": "regex", "tag": "tags",
		"exclude_name": "exclude_names", "nmaes": "names", "x": "", "kernel": "", "ab": ""} {
		if got := suggest(in, cands); got != want {
			t.Errorf("suggest(%q) = %q, want %q", in, got, want)
		}
	}
	if d := editDistance(string(make([]byte, 100)), "a"); d != 64 {
		t.Errorf("long words: %d", d)
	}
}
