package main

import (
	"bytes"
	encsv "encoding/csv"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/golden"
	"github.com/libocca/occa-tools/formats/perfetto"
	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

func TestConvert(t *testing.T) {
	runGolden(t, [][2]string{
		{"help-convert", "help convert"},
		{"convert-no-to", "convert -o out small.occa"},
		{"convert-bad-to", "convert -to xml -o out small.occa"},
		{"convert-no-out", "convert -to csv small.occa"},
		{"convert-damaged", "convert -to csv -o out-damaged damaged.occa"},
		{"convert-salvage", "convert -to csv -o out-salvage -salvage damaged.occa"},
		// -compress given to another format is a mistake; the same format
		// without it, in the same process, is not (flags are fresh each run).
		{"convert-compress-csv", "convert -to csv -compress=false -o out-compress small.occa"},
		{"convert-csv-after-compress", "convert -to csv -o out-after small.occa"},
	})
}

// TestConvertCSV checks the CSV of the small trace against a golden file,
// and that a run directory gives one file per trace plus the process table.
func TestConvertCSV(t *testing.T) {
	dir := t.TempDir()
	writeTraces(t, dir)
	os.MkdirAll(filepath.Join(dir, "run"), 0o755)
	small, _ := os.ReadFile(filepath.Join(dir, "small.occa"))
	os.WriteFile(filepath.Join(dir, "run", "a.occatrace"), small, 0o644)
	var other bytes.Buffer // another process of the same rank
	if err := tracetest.WriteSmall(&other, tracetest.SmallOptions{PID: 4243}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "run", "b.occatrace"), other.Bytes(), 0o644)
	out := filepath.Join(dir, "out")
	var so, se strings.Builder
	if st := run([]string{"convert", "-to", "csv", "-o", out, filepath.Join(dir, "run")}, &Env{Stdout: &so, Stderr: &se}); st != 0 {
		t.Fatalf("status %d: %s", st, se.String())
	}
	for _, name := range []string{"events/events-rank00003.csv", "events/events-rank00003-1.csv", "processes/part-00000-of-00001.csv"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(name, "processes/") {
			b = []byte(strings.ReplaceAll(string(b), dir, "$DIR"))
			name = "convert-processes.csv"
		} else if strings.Contains(name, "-1") {
			continue
		} else {
			name = "convert-small.csv"
		}
		golden.Check(t, filepath.Join("testdata", name+".golden"), b)
	}
}

// TestConvertLeftOut converts to Perfetto a trace with more device times
// that overlap without nesting than a track has lanes: convert succeeds
// and says how many slices it left out, where, and what keeps them.
func TestConvertLeftOut(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, tracetest.Header())
	if err != nil {
		t.Fatal(err)
	}
	b := w.Batch(0)
	const n = perfetto.MaxLanes + 3
	for i := range n {
		ts := tracetest.MonoStart + int64(i)*1000
		if err := b.Add(trace.DeviceTime, ts, uint64(i+1), uint64(ts), uint64(ts+1e9)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteBatch(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "t.occatrace")
	os.WriteFile(in, buf.Bytes(), 0o644)
	out := filepath.Join(dir, "out")
	var so, se strings.Builder
	if st := run([]string{"convert", "-to", "perfetto", "-o", out, in}, &Env{Stdout: &so, Stderr: &se}); st != 0 {
		t.Fatalf("status %d: %s", st, se.String())
	}
	want := "occa-tools convert: " + in + ": 3 slices overlapped, without nesting, the slices of 256 lanes of their track and were left out of the Perfetto trace; -to csv or parquet keeps every row\n"
	if se.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", se.String(), want)
	}
}

// shardRun writes a run directory of eight traces, ranks 1 to 7 and a
// second process of rank 3, and returns it.
func shardRun(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "run")
	os.MkdirAll(dir, 0o755)
	for i, o := range []tracetest.SmallOptions{{Rank: 1}, {Rank: 2}, {}, {PID: 4243}, {Rank: 4}, {Rank: 5}, {Rank: 6}, {Rank: 7}} {
		var b bytes.Buffer
		if err := tracetest.WriteSmall(&b, o); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("t%d.occatrace", i)), b.Bytes(), 0o644)
	}
	return dir
}

// files lists the files under dir, relative to it, sorted.
func files(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// Shards of a run convert into one directory: every rank's file exactly
// once, byte for byte what the unsharded conversion writes, and a
// process-table part per shard holding its traces.
func TestConvertShards(t *testing.T) {
	runDir := shardRun(t)
	whole := filepath.Join(t.TempDir(), "whole")
	sharded := filepath.Join(t.TempDir(), "sharded")
	convert := func(out string, args ...string) string {
		var so, se strings.Builder
		if st := run(append(append([]string{"convert", "-to", "csv", "-o", out}, args...), runDir), &Env{Stdout: &so, Stderr: &se}); st != 0 {
			t.Fatalf("%v: status %d: %s", args, st, se.String())
		}
		return se.String()
	}
	convert(whole)
	for _, i := range []int{2, 0, 1} {
		convert(sharded, "-shard", fmt.Sprintf("%d/3", i))
	}
	wantFiles := []string{"events/events-rank00001.csv", "events/events-rank00002.csv", "events/events-rank00003-1.csv",
		"events/events-rank00003.csv", "events/events-rank00004.csv", "events/events-rank00005.csv", "events/events-rank00006.csv",
		"events/events-rank00007.csv"}
	if got := files(t, whole); !slices.Equal(got, append(slices.Clone(wantFiles), "processes/part-00000-of-00001.csv")) {
		t.Errorf("unsharded: %q", got)
	}
	got := files(t, sharded)
	if want := append(slices.Clone(wantFiles), "processes/part-00000-of-00003.csv", "processes/part-00001-of-00003.csv",
		"processes/part-00002-of-00003.csv"); !slices.Equal(got, want) {
		t.Fatalf("sharded: %q, want %q", got, want)
	}
	for _, f := range wantFiles {
		a, _ := os.ReadFile(filepath.Join(whole, f))
		b, _ := os.ReadFile(filepath.Join(sharded, f))
		if !bytes.Equal(a, b) || len(a) == 0 {
			t.Errorf("%s: sharded %d bytes differ from unsharded %d", f, len(b), len(a))
		}
	}
	// Shard i has the ranks that are i modulo 3, in input order.
	for i, want := range []string{"3 3 6", "1 4 7", "2 5"} {
		f, _ := os.Open(filepath.Join(sharded, fmt.Sprintf("processes/part-%05d-of-00003.csv", i)))
		rows, err := encsv.NewReader(f).ReadAll()
		f.Close()
		var ranks []string
		for _, r := range rows[1:] {
			ranks = append(ranks, r[0])
		}
		if err != nil || strings.Join(ranks, " ") != want {
			t.Errorf("part %d: ranks %q, %v; want %s", i, ranks, err, want)
		}
	}
}

// Convert does not overwrite an earlier conversion unless -force, and
// refuses a directory holding a conversion in another number of shards.
func TestConvertOverwrite(t *testing.T) {
	runDir := shardRun(t)
	out := filepath.Join(t.TempDir(), "out")
	convert := func(args ...string) (int, string) {
		var so, se strings.Builder
		st := run(append(append([]string{"convert", "-to", "parquet", "-o", out}, args...), runDir), &Env{Stdout: &so, Stderr: &se})
		return st, se.String()
	}
	if st, se := convert("-shard", "1/3"); st != 0 {
		t.Fatalf("status %d: %s", st, se)
	}
	st, se := convert("-shard", "1/3")
	if want := filepath.Join(out, "events", "part-00001-of-00003-000.parquet") + " exists, from an earlier conversion: convert into a fresh directory (-o), or give -force"; st != 1 || !strings.Contains(se, want) {
		t.Errorf("again: status %d, %q, want 1 and %q", st, se, want)
	}
	if st, se := convert("-shard", "1/3", "-force"); st != 0 {
		t.Errorf("-force: status %d: %s", st, se)
	}
	st, se = convert()
	if want := "holds " + filepath.Join(out, "processes", "part-00001-of-00003.parquet") + ", from a conversion in another number of shards than 1"; st != 1 || !strings.Contains(se, want) {
		t.Errorf("unsharded after sharded: status %d, %q, want 1 and %q", st, se, want)
	}
}

// -to parquet writes a file per group of traces converted at once (-j),
// each holding a run of consecutive ranks in rank order, the rank in every
// row; together they hold exactly the rows of a conversion into one file.
// A later conversion of the shard into other groups finds every file of
// the earlier one.
func TestConvertParquetParts(t *testing.T) {
	runDir := shardRun(t)
	convert := func(out string, args ...string) (int, string) {
		var so, se strings.Builder
		st := run(append(append([]string{"convert", "-to", "parquet", "-o", out}, args...), runDir), &Env{Stdout: &so, Stderr: &se})
		return st, se.String()
	}
	rows := func(path string) []analysis.Record {
		recs, err := pq.ReadFile[analysis.Record](path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return recs
	}
	key := func(recs []analysis.Record) []string {
		var out []string
		for _, r := range recs {
			out = append(out, fmt.Sprintf("%+v", r))
		}
		slices.Sort(out)
		return out
	}
	one, three := filepath.Join(t.TempDir(), "one"), filepath.Join(t.TempDir(), "three")
	if st, se := convert(one, "-j", "1"); st != 0 {
		t.Fatalf("-j 1: status %d: %s", st, se)
	}
	if st, se := convert(three, "-j", "3"); st != 0 {
		t.Fatalf("-j 3: status %d: %s", st, se)
	}
	if got, want := files(t, one), []string{"events/part-00000-of-00001-000.parquet", "processes/part-00000-of-00001.parquet"}; !slices.Equal(got, want) {
		t.Errorf("-j 1: files %q, want %q", got, want)
	}
	if got, want := files(t, three), []string{"events/part-00000-of-00001-000.parquet", "events/part-00000-of-00001-001.parquet",
		"events/part-00000-of-00001-002.parquet", "processes/part-00000-of-00001.parquet"}; !slices.Equal(got, want) {
		t.Errorf("-j 3: files %q, want %q", got, want)
	}
	// The eight traces (ranks 1 2 3 3 4 5 6 7, the same size) in three
	// groups of about equal bytes.
	var all []analysis.Record
	for k, want := range []string{"1 2 3", "3 4", "5 6 7"} {
		recs := rows(filepath.Join(three, fmt.Sprintf("events/part-00000-of-00001-%03d.parquet", k)))
		var ranks []string
		for i, r := range recs {
			if i > 0 && r.Rank < recs[i-1].Rank {
				t.Fatalf("part %d: row %d has rank %d after rank %d", k, i, r.Rank, recs[i-1].Rank)
			}
			if i == 0 || r.Rank != recs[i-1].Rank {
				ranks = append(ranks, fmt.Sprint(r.Rank))
			}
		}
		if got := strings.Join(ranks, " "); got != want {
			t.Errorf("part %d: ranks %s, want %s", k, got, want)
		}
		all = append(all, recs...)
	}
	whole := rows(filepath.Join(one, "events/part-00000-of-00001-000.parquet"))
	if len(whole) == 0 || !slices.Equal(key(all), key(whole)) {
		t.Errorf("-j 3 wrote %d rows, -j 1 %d, or other rows", len(all), len(whole))
	}
	// Again into three's directory in one group: the earlier parts are in
	// the way, and -force removes all of them.
	st, se := convert(three, "-j", "1")
	if want := filepath.Join(three, "events", "part-00000-of-00001-000.parquet") + " exists, from an earlier conversion"; st != 1 || !strings.Contains(se, want) {
		t.Errorf("again: status %d, %q, want 1 and %q", st, se, want)
	}
	if st, se := convert(three, "-j", "1", "-force"); st != 0 {
		t.Fatalf("-force: status %d: %s", st, se)
	}
	if got, want := files(t, three), files(t, one); !slices.Equal(got, want) {
		t.Errorf("after -force: files %q, want %q", got, want)
	}
}

// The shard comes from -shard, else from the launcher's rank and size, else
// it is the whole run; a malformed -shard is a usage error.
func TestPickShard(t *testing.T) {
	for _, c := range []struct {
		flag string
		env  []string
		want shard
		err  string
	}{
		{"", nil, wholeRun, ""},
		{"", []string{"SLURM_PROCID=3", "SLURM_NTASKS=8"}, shard{3, 8, "SLURM_PROCID"}, ""},
		{"", []string{"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=1"}, wholeRun, ""},
		{"2/4", []string{"SLURM_PROCID=3", "SLURM_NTASKS=8"}, shard{2, 4, "-shard"}, ""},
		{"0/1", nil, shard{0, 1, "-shard"}, ""},
		{"4/4", nil, shard{}, `-shard "4/4": want i/n with 0 <= i < n`},
		{"-1/4", nil, shard{}, "want i/n"},
		{"1", nil, shard{}, "want i/n"},
		{"1/0", nil, shard{}, "want i/n"},
		{"a/b", nil, shard{}, "want i/n"},
	} {
		got, err := pickShard(c.flag, c.env)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want %q", c.flag, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q %q: %+v, %v; want %+v", c.flag, c.env, got, err, c.want)
		}
	}
}

// Perfetto's 2 GiB: traces that together pass it stay split, with a line
// saying so; a trace that would pass it by itself is split by time into
// parts, said on stderr.
func TestConvertPerfettoLimit(t *testing.T) {
	runDir := shardRun(t)
	single := filepath.Join(runDir, "t0.occatrace")
	convert := func(out string, in string, flags ...string) (int, string) {
		var so, se strings.Builder
		args := append(append([]string{"convert", "-to", "perfetto"}, flags...), "-o", out, in)
		st := run(args, &Env{Stdout: &so, Stderr: &se})
		return st, se.String()
	}
	whole := filepath.Join(t.TempDir(), "whole")
	if code, se := convert(whole, single, "-compress=false"); code != 0 {
		t.Fatalf("status %d: %s", code, se)
	}
	st, err := os.Stat(filepath.Join(whole, "trace.perfetto-trace"))
	if err != nil {
		t.Fatal(err)
	}
	defer func(m int64) { perfetto.MaxTrace = m }(perfetto.MaxTrace)
	// One trace's file is under the limit; eight together are over it.
	perfetto.MaxTrace = 2 * st.Size()
	out := filepath.Join(t.TempDir(), "split")
	code, se := convert(out, runDir, "-compress=false")
	if want := "it stays in 8 files that each load by themselves, in " + out; code != 0 || !strings.Contains(se, want) {
		t.Errorf("split: status %d, %q, want %q", code, se, want)
	}
	if got := files(t, out); len(got) != 9 || got[0] != "events-rank00001.perfetto-trace" || got[8] != "processes/part-00000-of-00001.csv" {
		t.Errorf("split files: %q", got)
	}
	// Compressed, the eight files are far under the limit, but what a
	// reader holds, unpacked, is not: they stay apart too.
	out = filepath.Join(t.TempDir(), "compressed")
	code, se = convert(out, runDir)
	if want := "it stays in 8 files that each load by themselves, in " + out; code != 0 || !strings.Contains(se, want) {
		t.Errorf("compressed: status %d, %q, want %q", code, se, want)
	}
	if got := files(t, out); len(got) != 9 {
		t.Errorf("compressed files: %q", got)
	}
	// One trace over the limit: parts.
	perfetto.MaxTrace = st.Size() * 3 / 4
	out = filepath.Join(t.TempDir(), "parts")
	code, se = convert(out, single, "-compress=false")
	if want := "the Perfetto trace would pass the 2 GiB that ui.perfetto.dev loads: it is split by time into 2 traces"; code != 0 || !strings.Contains(se, want) {
		t.Errorf("parts: status %d, %q, want 0 and %q", code, se, want)
	}
	if got := files(t, out); !slices.Equal(got, []string{"events-rank00001-part0002.perfetto-trace", "events-rank00001.perfetto-trace", "processes/part-00000-of-00001.csv"}) {
		t.Errorf("parts: files %q", got)
	}
}

// rankGroups splits traces into runs of consecutive ranks of about equal
// bytes, never more groups than traces, never an empty one.
func TestRankGroups(t *testing.T) {
	for _, c := range []struct {
		ranks, sizes []int64
		n            int
		want         string
	}{
		{[]int64{3, 1, 2, 0}, []int64{1, 1, 1, 1}, 2, "[[3 1] [2 0]]"},
		{[]int64{0, 1, 2, 3}, []int64{1, 1, 1, 1}, 8, "[[0] [1] [2] [3]]"},
		{[]int64{0, 1, 2, 3}, []int64{100, 1, 1, 1}, 2, "[[0] [1 2 3]]"},
		{[]int64{0, 1, 2, 3}, []int64{100, 1, 1, 1}, 3, "[[0] [1] [2 3]]"},
		{[]int64{0, 1, 2, 3}, []int64{1, 1, 1, 100}, 2, "[[0 1 2] [3]]"},
		{[]int64{5, 5, 5}, []int64{0, 0, 0}, 1, "[[0 1 2]]"},
		{[]int64{7}, []int64{9}, 0, "[[0]]"},
		{nil, nil, 4, "[]"},
	} {
		if got := fmt.Sprint(rankGroups(c.ranks, c.sizes, c.n)); got != c.want {
			t.Errorf("rankGroups(%v, %v, %d) = %s, want %s", c.ranks, c.sizes, c.n, got, c.want)
		}
	}
}
