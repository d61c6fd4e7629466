package config

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// loadWithin is Load with a deadline, so that a config that blocks fails
// the test instead of hanging it.
func loadWithin(t *testing.T, path string) (*Config, error) {
	t.Helper()
	type result struct {
		cfg *Config
		err error
	}
	done := make(chan result, 1)
	go func() {
		cfg, err := Load(path)
		done <- result{cfg, err}
	}()
	select {
	case r := <-done:
		return r.cfg, r.err
	case <-time.After(20 * time.Second):
		t.Fatalf("Load(%q) did not return", path)
		return nil, nil
	}
}

// Files that are not configs, or are configs built to exhaust the reader:
// each is refused at once with one error that names the file and says what
// to do, and the config is the default one (on_error too, unless the text
// says abort before its first table).
func TestLoadHostileFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo.toml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	fifoLink := filepath.Join(dir, "link.toml")
	if err := os.Symlink(fifo, fifoLink); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock.toml")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	sparse := filepath.Join(dir, "sparse.toml")
	if f, err := os.Create(sparse); err != nil || f.Truncate(1<<40) != nil || f.Close() != nil {
		t.Skip("no sparse 1 TiB file here")
	}
	const notRegular = ", not a regular file; give the path of a TOML file"
	const tooLarge = ": larger than 64KiB; a config is a few KiB of TOML: check that this is the file you meant"
	const tooDeep = ": nested more than 16 levels deep (each table or key name and each array element is a level); remove the extra nesting"
	deepArray := "a" + strings.Repeat("[0]", 15)
	deepTable := "a" + strings.Repeat(".b", 15)
	longPath := strings.Repeat("k234567890123456.", 15) // 15 parts of 16 bytes: with k2, 257 bytes
	padding := "\n" + strings.Repeat("# padding\n", MaxSize/10)

	for _, tc := range []struct {
		name  string
		path  string
		want  string // the one error, with path for the file's path
		abort bool
	}{
		{"named pipe", fifo, "path: cannot read config: a named pipe" + notRegular, false},
		{"symlink to a named pipe", fifoLink, "path: cannot read config: a named pipe" + notRegular, false},
		{"socket", sock, "path: cannot read config: a socket" + notRegular, false},
		{"/dev/zero", "/dev/zero", "path: cannot read config: a character device" + notRegular, false},
		{"directory", dir, "path: cannot read config: a directory" + notRegular, false},
		{"unreadable /proc file", "/proc/self/mem", "path: cannot read config: input/output error", false},
		{"missing, odd name", filepath.Join(dir, "a\nb\x1b[31m.toml"),
			strings.ReplaceAll(dir, "\n", `\n`) + `/a\nb\x1b[31m.toml: cannot read config: no such file or directory`, false},
		{"sparse 1 TiB", sparse, "path" + tooLarge, false},
		{"too large", write("large.toml", "on_error = \"abort\"\n"+padding+"#"), "path" + tooLarge, true},
		{"60,000 [", write("brackets.toml", "a = "+strings.Repeat("[", 60000)),
			"path:1: " + deepArray + tooDeep, false},
		{"nested inline tables", write("braces.toml", "on_error = 'abort'\na = "+strings.Repeat("{b = ", 10000)),
			"path:2: " + deepTable + tooDeep, true},
		{"array of inline tables", write("mixed.toml", "a = [\n"+strings.Repeat("[{b = ", 1000)),
			"path:2: a[0][0].b[0].b[0].b[0].b[0].b[0].b[0].b" + tooDeep, false},
		{"dotted key", write("dotted.toml", "a"+strings.Repeat(".b", 30000)+" = 1\n"),
			"path:1: " + deepTable + tooDeep, false},
		{"table header", write("header.toml", "[output]\n[a"+strings.Repeat(".b", 30000)+"]\n"),
			"path:2: " + deepTable + tooDeep, false},
		{"long key name", write("longname.toml", "[output]\n"+strings.Repeat("x", 60000)+" = 1\n"),
			"path:2: output: a key name of 60000 bytes; key paths may be at most 256 bytes", false},
		{"long key path", write("longpath.toml", longPath+"k2 = 1\n"),
			"path:1: " + longPath[:len(longPath)-1] + ": a key path of 257 bytes; key paths may be at most 256 bytes", false},
		{"huge value", write("value.toml", "[output]\ndirectory = \""+strings.Repeat("d", 60000)+"\"\n"),
			"path:2: output.directory: a string of 60000 bytes; at most 4096 are allowed", false},
		{"huge value in an array", write("list.toml", "[filter.kernel]\nnames = [\"a\", \""+strings.Repeat("n", 5000)+"\"]\n"),
			"path:2: filter.kernel.names: a string of 5000 bytes; at most 4096 are allowed", false},
		{"NUL byte", write("nul.toml", "on_error = \"abort\"\na = \"\x00\"\n"),
			"path:2: TOML syntax: TOML files cannot contain control characters: '0x00'", true},
		{"not UTF-8", write("latin1.toml", "# caf\xe9\n"),
			"path:1: TOML syntax: invalid UTF-8 byte: 0xe9", false},
		{"terminal escape", write("escape.toml", "[output]\ndirectory = \"\x1b[2J\"\n"),
			"path:2: TOML syntax: TOML files cannot contain control characters: '0x1b'", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := loadWithin(t, tc.path)
			want := strings.Replace(tc.want, "path", tc.path, 1)
			es, ok := err.(Errors)
			if !ok || len(es) != 1 || es.Error() != want {
				t.Fatalf("error = %v\nwant    %s", err, want)
			}
			def := Default()
			if cfg == nil || cfg.Output != def.Output || cfg.Log != def.Log || (cfg.OnError == OnErrorAbort) != tc.abort {
				t.Errorf("config = %+v, want the default with abort %v", cfg, tc.abort)
			}
		})
	}
}

// Root reads any file, so an unreadable one is tested only without root.
func TestLoadUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads any file")
	}
	p := filepath.Join(t.TempDir(), "secret.toml")
	if err := os.WriteFile(p, []byte("on_error = \"abort\"\n"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := loadWithin(t, p); err == nil || err.Error() != p+": cannot read config: permission denied" {
		t.Errorf("error = %v", err)
	}
}

// The limits leave room: a file of exactly MaxSize bytes, keys 16 levels
// deep and 256 bytes long, and strings of MaxString bytes are read.
func TestLimitsAreInclusive(t *testing.T) {
	head := strings.Repeat("k", MaxKeyPath) + " = 1\n" +
		"[filter.kernel]\nnames = [\"" + strings.Repeat("n", MaxString) + "\"]\n" +
		"[a]\n" + strings.Repeat("b.", 12) + "c = [[1]]\n" // a.b...c[0][0]: 16 steps
	text := head + strings.Repeat("#", MaxSize-len(head))
	_, err := Parse("edge.toml", []byte(text))
	es, ok := err.(Errors)
	// The two unknown tables are the only errors.
	if !ok || len(es) != 2 || !strings.HasPrefix(es[0].Msg, "unknown key kkkk") || es[1].Msg != "unknown key a" {
		t.Errorf("error = %v", err)
	}
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain/path.toml":          "plain/path.toml",
		"a\nb\tc":                  `a\nb\tc`,
		"\x1b[31mred":              `\x1b[31mred`,
		"caf\xe9 \xff":             `caf\xe9 \xff`,
		"\u202eevil":               `\u202eevil`,
		"ünïcode ok":               "ünïcode ok",
		strings.Repeat("x", 20):    strings.Repeat("x", 16) + "...",
		strings.Repeat("\n", 20):   strings.Repeat(`\n`, 8) + "...",
		"123456789012345\u00e9xyz": "123456789012345...",
	} {
		if got := Printable(in, 16); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// A panic while parsing (here: a decoder made to panic) is one config
// error, naming the file, and the config is the default one.
func TestParsePanicIsAnError(t *testing.T) {
	saved := rootTable
	defer func() { rootTable = saved }()
	rootTable = &table{fields: []*field{{name: "boom", decode: func(*decoder, *keyPath, any, any) bool { panic("boom") }}}}
	cfg, err := Parse("p.toml", []byte("on_error = \"abort\"\nboom = 1\n"))
	want := "p.toml: internal error while reading the config (boom); please report it, with the file"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant    %s", err, want)
	}
	if cfg == nil || cfg.OnError != OnErrorAbort || cfg.Output != Default().Output {
		t.Errorf("config = %+v, want the default with on_error = abort", cfg)
	}
}
