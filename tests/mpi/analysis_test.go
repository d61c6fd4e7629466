package mpi

import (
	"encoding/binary"
	"encoding/csv"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// occaTools runs build/bin/occa-tools with args and returns its stdout.
func occaTools(t *testing.T, args ...string) string {
	t.Helper()
	tool := filepath.Join(filepath.Dir(occaProf), "occa-tools")
	out, err := exec.Command(tool, args...).Output()
	if err != nil {
		t.Fatalf("occa-tools %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// readCSV parses text as CSV into rows of column -> value.
func readCSV(t *testing.T, text string) []map[string]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("CSV: %v\n%s", err, text)
	}
	var rows []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, c := range recs[0] {
			m[c] = r[i]
		}
		rows = append(rows, m)
	}
	return rows
}

// The summary's mpi section counts every call program.c makes on its four
// ranks, with their bytes, and each rank's time in MPI; the events table
// has a row per call with its function, peer (world rank), tag and bytes.
func TestAnalysis(t *testing.T) {
	dir := record(t, "[events]\nenable = [\"mpi\"]\n", nil)
	got := map[string]string{}
	for _, r := range readCSV(t, occaTools(t, "summary", "-format", "csv", "-section", "mpi", dir)) {
		got[r["function"]] = r["kind"] + " " + r["calls"] + " " + r["bytes"]
	}
	want := map[string]string{
		"init": "call 4 0", "finalize": "call 4 0", "comm_split": "call 4 0", "comm_free": "call 4 0",
		"send": "p2p 4 208", "recv": "p2p 8 224", "isend": "p2p 12 320", "irecv": "p2p 8 304",
		"sendrecv": "p2p 4 64", "probe": "p2p 4 0",
		"waitall": "wait 4 0", "wait": "wait 12 0",
		"barrier": "collective 4 0", "bcast": "collective 4 512", "allreduce": "collective 16 400", "reduce": "collective 4 16",
		"gatherv": "collective 4 16", "scatterv": "collective 4 16", "allgatherv": "collective 4 16",
		"alltoallv": "collective 4 64", "reduce_scatter": "collective 4 64", "reduce_scatter_block": "collective 4 64",
		"scan": "collective 4 16", "exscan": "collective 4 16",
	}
	if !maps.Equal(got, want) {
		t.Errorf("mpi section: %v\nwant %v", got, want)
	}
	ranksTable := readCSV(t, occaTools(t, "summary", "-format", "csv", "-section", "ranks", dir))
	for _, r := range ranksTable {
		if ns, err := strconv.ParseInt(r["mpi_ns"], 10, 64); err != nil || ns <= 0 {
			t.Errorf("rank %s: mpi_ns %q", r["rank"], r["mpi_ns"])
		}
	}
	out := filepath.Join(t.TempDir(), "csv")
	occaTools(t, "convert", "-to", "csv", "-o", out, dir)
	b, err := os.ReadFile(filepath.Join(out, "events", "events-rank00001.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows := readCSV(t, string(b))
	slices.SortStableFunc(rows, func(a, b map[string]string) int {
		x, _ := strconv.ParseInt(a["start_ns"], 10, 64)
		y, _ := strconv.ParseInt(b["start_ns"], 10, 64)
		return int(x - y)
	})
	var p2p []string
	for _, r := range rows {
		if r["kind"] == "mpi_p2p" {
			p2p = append(p2p, strings.Join([]string{r["name"], r["peer"], r["tag"], r["bytes"]}, " "))
		}
	}
	if want := []string{"recv 0 11 100", "irecv 0 22 64", "isend 2 22 64", "irecv -1 33 12", "isend 2 33 12",
		"sendrecv 2 55 16", "isend 2 66 4", "probe 0 66 0", "recv 0 66 4", "send 3 44 4"}; !slices.Equal(p2p, want) {
		t.Errorf("rank 1's point-to-point rows: %q, want %q", p2p, want)
	}
}

// protoFields calls f for each field of protobuf message b: its number, and
// its value (varint or fixed64) or bytes (length-delimited).
func protoFields(t *testing.T, b []byte, f func(num int, v uint64, sub []byte)) {
	t.Helper()
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			t.Fatalf("bad protobuf key")
		}
		b = b[n:]
		num, wire := int(key>>3), key&7
		switch wire {
		case 0:
			v, n := binary.Uvarint(b)
			if n <= 0 {
				t.Fatalf("bad varint in field %d", num)
			}
			f(num, v, nil)
			b = b[n:]
		case 1:
			f(num, binary.LittleEndian.Uint64(b), nil)
			b = b[8:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				t.Fatalf("bad length in field %d", num)
			}
			f(num, 0, b[n:n+int(l)])
			b = b[n+int(l):]
		case 5:
			f(num, uint64(binary.LittleEndian.Uint32(b)), nil)
			b = b[4:]
		default:
			t.Fatalf("wire type %d in field %d", wire, num)
		}
	}
}

// The Perfetto trace of the run has a flow from each send to its receive:
// the messages of tags 11, 22 and 44 (8); the 4 of tag 33, received from
// any source, and the 4 of tag 66, received after that on the same
// communicator, leave their send and end nowhere; sendrecv's get none.
func TestPerfettoFlows(t *testing.T) {
	dir := record(t, "[events]\nenable = [\"mpi\"]\n", nil)
	out := filepath.Join(t.TempDir(), "pf")
	occaTools(t, "convert", "-to", "perfetto", "-compress=false", "-o", out, dir) // packets read below
	b, err := os.ReadFile(filepath.Join(out, "trace.perfetto-trace"))
	if err != nil {
		t.Fatal(err)
	}
	leave, end := map[uint64]int{}, map[uint64]int{}
	protoFields(t, b, func(num int, _ uint64, pkt []byte) {
		if num != 1 { // TracePacket
			return
		}
		protoFields(t, pkt, func(num int, _ uint64, te []byte) {
			if num != 11 { // TrackEvent
				return
			}
			protoFields(t, te, func(num int, v uint64, _ []byte) {
				switch num {
				case 47: // flow_ids
					leave[v]++
				case 48: // terminating_flow_ids
					end[v]++
				}
			})
		})
	})
	matched := 0
	for id, n := range end {
		if n != 1 || leave[id] != 1 {
			t.Errorf("flow %x leaves %d slices, ends in %d", id, leave[id], n)
		}
		matched++
	}
	if len(leave) != 16 || matched != 8 {
		t.Errorf("%d flows leave a send, %d end in a receive; want 16 and 8", len(leave), matched)
	}
}
