package analysis

import (
	"testing"

	"github.com/libocca/occa-tools/formats/golden"
	"github.com/libocca/occa-tools/formats/table"
)

// events_csv.go is the CSV encoder that Events declares; -update writes it.
func TestCSVCode(t *testing.T) {
	src, err := table.GoFile("analysis", "TestCSVCode", Events.GoCSV("appendEventsCSV", "Record"))
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "events_csv.go", src)
}
