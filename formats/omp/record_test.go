package omp

import (
	"testing"

	"github.com/libocca/occa-tools/formats/golden"
	"github.com/libocca/occa-tools/formats/table"
)

// tables_csv.go is the CSV encoders that Rows and Dependences declare;
// -update writes it.
func TestCSVCode(t *testing.T) {
	src, err := table.GoFile("omp", "TestCSVCode", Rows.GoCSV("appendRowsCSV", "Record"),
		Dependences.GoCSV("appendDependencesCSV", "EdgeRecord"))
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "tables_csv.go", src)
}
