package procinfo

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestRank(t *testing.T) {
	tests := []struct {
		env        []string
		rank, size int64
		source     string
	}{
		{nil, -1, -1, ""},
		{[]string{"OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=8"}, 3, 8, "OMPI_COMM_WORLD_RANK"},
		{[]string{"PMI_RANK=5", "PMI_SIZE=6"}, 5, 6, "PMI_RANK"},
		{[]string{"PMIX_RANK=1"}, 1, -1, "PMIX_RANK"},
		{[]string{"PALS_RANKID=7", "PALS_NRANKS=16"}, 7, 16, "PALS_RANKID"},
		{[]string{"SLURM_PROCID=2", "SLURM_NTASKS=4"}, 2, 4, "SLURM_PROCID"},
		// Open MPI inside a Slurm allocation: the MPI launcher's rank wins.
		{[]string{"SLURM_PROCID=0", "SLURM_NTASKS=1", "OMPI_COMM_WORLD_RANK=9", "OMPI_COMM_WORLD_SIZE=10"}, 9, 10, "OMPI_COMM_WORLD_RANK"},
		// Garbage is skipped, not trusted.
		{[]string{"PMI_RANK=abc", "SLURM_PROCID=4", "SLURM_NTASKS=x"}, 4, -1, "SLURM_PROCID"},
		{[]string{"PMI_RANK=-2"}, -1, -1, ""},
	}
	for _, tt := range tests {
		r, s, src := Rank(tt.env)
		if r != tt.rank || s != tt.size || src != tt.source {
			t.Errorf("Rank(%q) = %d, %d, %q; want %d, %d, %q", tt.env, r, s, src, tt.rank, tt.size, tt.source)
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
