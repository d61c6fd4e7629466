package procinfo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Extension is the trace file suffix.
const Extension = ".occatrace"

// Expand fills a name pattern's tokens ({exe} {host} {pid} {rank} {time});
// the config checked the pattern already. Characters that would make a path
// are replaced.
func (i *Info) Expand(pattern string, start time.Time) string {
	rank := "x"
	if i.Rank >= 0 {
		rank = strconv.FormatInt(i.Rank, 10)
	}
	r := strings.NewReplacer(
		"{exe}", i.ExeName(),
		"{host}", i.Host,
		"{pid}", strconv.Itoa(i.PID),
		"{rank}", rank,
		"{time}", start.UTC().Format("20060102T150405"),
	)
	name := r.Replace(pattern)
	return strings.Map(func(c rune) rune {
		if c == '/' || c == 0 {
			return '_'
		}
		return c
	}, name)
}

// Create makes dir and a new trace file in it named base+Extension, or
// base-1, base-2, ... when that exists (pid reuse across runs in one
// directory), never overwriting a file.
func Create(dir, base string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the trace directory %s: %w (set output.directory in the config to a writable place)", dir, err)
	}
	for n := 0; n < 1000; n++ {
		name := base
		if n > 0 {
			name = fmt.Sprintf("%s-%d", base, n)
		}
		path := filepath.Join(dir, name+Extension)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("creating the trace file %s: %w (set output.directory in the config to a writable place)", path, err)
		}
	}
	return nil, fmt.Errorf("creating a trace file in %s: %s%s and 999 numbered variants exist; clean the directory", dir, base, Extension)
}
