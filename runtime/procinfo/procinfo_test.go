package procinfo

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRank(t *testing.T) {
	tests := []struct {
		env        []string
		rank, size int64
		source     string
		ignored    []string
	}{
		{nil, -1, -1, "", nil},
		{[]string{"OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=8"}, 3, 8, "OMPI_COMM_WORLD_RANK", nil},
		{[]string{"PMI_RANK=5", "PMI_SIZE=6"}, 5, 6, "PMI_RANK", nil},
		{[]string{"PMIX_RANK=1"}, 1, -1, "PMIX_RANK", nil},
		{[]string{"PALS_RANKID=7", "PALS_NRANKS=16"}, 7, 16, "PALS_RANKID", nil},
		{[]string{"SLURM_PROCID=2", "SLURM_NTASKS=4"}, 2, 4, "SLURM_PROCID", nil},
		{[]string{"FLUX_TASK_RANK= 0 ", "FLUX_JOB_SIZE=2147483648"}, 0, 2147483648, "FLUX_TASK_RANK", nil},
		// Open MPI inside a Slurm allocation: the MPI launcher's rank wins.
		{[]string{"SLURM_PROCID=0", "SLURM_NTASKS=1", "OMPI_COMM_WORLD_RANK=9", "OMPI_COMM_WORLD_SIZE=10"}, 9, 10, "OMPI_COMM_WORLD_RANK", nil},
		// Garbage is reported and skipped, not trusted.
		{[]string{"PMI_RANK=abc", "SLURM_PROCID=4", "SLURM_NTASKS=x"}, 4, -1, "SLURM_PROCID", []string{
			`PMI_RANK="abc" is not a rank (a whole number 0..2147483647); ignored`,
			`SLURM_NTASKS="x" is not a world size (a whole number 1..2147483648); ignored`,
		}},
		{[]string{"PMI_RANK=-2"}, -1, -1, "", []string{`PMI_RANK="-2" is not a rank (a whole number 0..2147483647); ignored`}},
		{[]string{"PMIX_RANK=99999999999999999999999", "PMI_RANK=2147483648", "SLURM_PROCID=2147483647"}, 2147483647, -1, "SLURM_PROCID", []string{
			`PMIX_RANK="99999999999999999999999" is not a rank (a whole number 0..2147483647); ignored`,
			`PMI_RANK="2147483648" is not a rank (a whole number 0..2147483647); ignored`,
		}},
		{[]string{"OMPI_COMM_WORLD_RANK=4", "OMPI_COMM_WORLD_SIZE=4"}, 4, -1, "OMPI_COMM_WORLD_RANK", []string{
			"OMPI_COMM_WORLD_SIZE=4 is not above OMPI_COMM_WORLD_RANK=4; the world size is ignored",
		}},
		{[]string{"OMPI_COMM_WORLD_RANK=1\n\x1b[2J" + strings.Repeat("9", 100), "OMPI_COMM_WORLD_SIZE=0"}, -1, -1, "", []string{
			`OMPI_COMM_WORLD_RANK="1\n\x1b[2J` + strings.Repeat("9", 26) + `"... is not a rank (a whole number 0..2147483647); ignored`,
		}},
	}
	for _, tt := range tests {
		r, s, src, ignored := readRank(tt.env)
		if r != tt.rank || s != tt.size || src != tt.source || strings.Join(ignored, "\n") != strings.Join(tt.ignored, "\n") {
			t.Errorf("readRank(%q) = %d, %d, %q, %q; want %d, %d, %q, %q", tt.env, r, s, src, ignored, tt.rank, tt.size, tt.source, tt.ignored)
		}
		if r2, s2, src2 := Rank(tt.env); r2 != r || s2 != s || src2 != src {
			t.Errorf("Rank(%q) differs from readRank", tt.env)
		}
	}
}

func TestExpand(t *testing.T) {
	i := Info{Host: "node07", PID: 4242, Rank: 3, Executable: "/opt/app/nekrs"}
	start := time.Date(2026, 11, 22, 10, 4, 5, 0, time.UTC)
	if got, want := i.Expand("{exe}-{host}-r{rank}-p{pid}-{time}", start), "nekrs-node07-r3-p4242-20261122T100405"; got != want {
		t.Errorf("Expand = %q, want %q", got, want)
	}
	i.Rank = -1
	i.Host = "a/b"
	if got, want := i.Expand("{host}-r{rank}", start), "a_b-rx"; got != want {
		t.Errorf("Expand = %q, want %q", got, want)
	}
}

func TestCreateNeverOverwrites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "deep", "traces")
	var names []string
	for n := 0; n < 3; n++ {
		f, err := Create(dir, "app-p1")
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.Base(f.Name()))
		f.Close()
	}
	want := []string{"app-p1.occatrace", "app-p1-1.occatrace", "app-p1-2.occatrace"}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("file %d = %s, want %s", i, names[i], want[i])
		}
	}
}

func TestCreateUnwritable(t *testing.T) {
	// Root writes anywhere, so use a path under a regular file.
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	_, err := Create(filepath.Join(file, "sub"), "x")
	if err == nil {
		t.Fatal("Create under a regular file succeeded")
	}
	want := "creating the trace directory " + filepath.Join(file, "sub") + ": mkdir " + file + ": not a directory (set output.directory in the config to a writable place)"
	if err.Error() != want {
		t.Errorf("error = %q\nwant %q", err, want)
	}
}

// Names that exist as something else are never opened: a named pipe (which
// would block the opener) or a symlink where the trace would go is skipped,
// and a named pipe as the directory is an error, at once.
func TestCreateHostile(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "app.occatrace"), 0o644); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "target")
	if err := os.Symlink(target, filepath.Join(dir, "app-1.occatrace")); err != nil {
		t.Fatal(err)
	}
	f, err := Create(dir, "app")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if filepath.Base(f.Name()) != "app-2.occatrace" {
		t.Errorf("created %s, want app-2.occatrace", f.Name())
	}
	if _, err := os.Lstat(target); err == nil {
		t.Errorf("Create wrote through a symlink")
	}
	pipe := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Create(pipe, "app")
	want := "creating the trace directory " + pipe + ": mkdir " + pipe + ": not a directory (set output.directory in the config to a writable place)"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant %s", err, want)
	}
}
