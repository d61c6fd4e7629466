package summary

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// ReadKernelTotals gives the kernels table's calls and totals, summed over
// the traces, in its order, and WriteKernelTotals prints them with
// FormatDuration; a damaged trace counts up to the damage and is named in
// the error.
func TestReadKernelTotals(t *testing.T) {
	dir := t.TempDir()
	a := writeSmall(t, dir, "a.occatrace", tracetest.SmallOptions{})
	b := writeSmall(t, dir, "b.occatrace", tracetest.SmallOptions{})
	got, err := ReadKernelTotals([]string{a, b}, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []KernelTotal{{"axpy", 4, 8000}, {"dot", 2, 6000}, {"norm", 2, 2000}} // small-twice.table
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	var out bytes.Buffer
	if err := WriteKernelTotals(&out, got); err != nil {
		t.Fatal(err)
	}
	table := "  kernel    calls        total          avg\n" +
		"  axpy          4      8.000us      2.000us\n" +
		"  dot           2      6.000us      3.000us\n" +
		"  norm          2      2.000us      1.000us\n"
	if out.String() != table {
		t.Errorf("got\n%s\nwant\n%s", out.String(), table)
	}

	data, _ := os.ReadFile(a)
	cut := filepath.Join(dir, "cut.occatrace")
	os.WriteFile(cut, data[:len(data)-10], 0o644) // inside its last chunk
	got, err = ReadKernelTotals([]string{a, cut}, analysis.Options{})
	if err == nil || !strings.HasPrefix(err.Error(), cut+": ") || !strings.Contains(err.Error(), "offset") {
		t.Errorf("error %v, want one naming cut.occatrace", err)
	}
	if len(got) == 0 || got[0].Calls < 2 {
		t.Errorf("got %+v, want at least the first trace's", got)
	}
	// Salvaging, as occa-prof reads a crashed program's trace: no error.
	got, err = ReadKernelTotals([]string{a, cut}, analysis.Options{Salvage: true})
	if err != nil || len(got) == 0 || got[0].Calls < 2 {
		t.Errorf("salvaging: %+v, %v; want at least the first trace's and no error", got, err)
	}
}
