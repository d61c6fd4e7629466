package parquet

import (
	"os"
	"strings"
	"testing"

	"github.com/libocca/occa-tools/formats/analysis"
	"github.com/libocca/occa-tools/formats/golden"
	"github.com/libocca/occa-tools/formats/omp"
)

// The record types carry one field per declared column, with the column's
// Go type and Parquet tag; every column has the getter of its type.
func TestTables(t *testing.T) {
	for _, err := range []error{analysis.Events.Check(true), omp.Rows.Check(true), omp.Dependences.Check(true),
		analysis.Processes.Check(true)} {
		if err != nil {
			t.Error(err)
		}
	}
}

// SCHEMA.md's column lists are those the table declarations give; with
// -update the test writes them there.
func TestSchemaDoc(t *testing.T) {
	const path = "SCHEMA.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, tb := range []struct{ name, columns string }{
		{analysis.Events.Name, analysis.Events.Markdown(true)},
		{omp.Rows.Name, omp.Rows.Markdown(true)},
		{omp.Dependences.Name, omp.Dependences.Markdown(true)},
		{analysis.Processes.Name, analysis.Processes.Markdown(true)},
	} {
		begin := "<!-- columns " + tb.name + ":"
		end := "<!-- end " + tb.name + " -->"
		i := strings.Index(doc, begin)
		j := strings.Index(doc, end)
		if i < 0 || j < i {
			t.Fatalf("%s: no %q ... %q markers for the %s table", path, begin, end, tb.name)
		}
		i += strings.Index(doc[i:], "\n") + 1
		doc = doc[:i] + tb.columns + doc[j:]
	}
	golden.Check(t, path, []byte(doc))
}
