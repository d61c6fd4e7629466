package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenerated checks the committed files are what genops writes now.
func TestGenerated(t *testing.T) {
	for name, want := range Files() {
		got, err := os.ReadFile(filepath.Join("..", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("runtime/occa/%s is stale: run `go run ./runtime/occa/genops runtime/occa`", name)
		}
	}
}

// TestMangledNames checks the first names against OCCA 2.0's libocca.so.
func TestMangledNames(t *testing.T) {
	for n, want := range map[int]string{
		0: "_ZNK4occa6kernelclEv",
		1: "_ZNK4occa6kernelclERKNS_9kernelArgE",
		3: "_ZNK4occa6kernelclERKNS_9kernelArgES3_S3_",
	} {
		if got := mangled(n); got != want {
			t.Errorf("mangled(%d) = %s, want %s", n, got, want)
		}
	}
	if got := strings.Count(mangled(MaxArgs), "S3_"); got != MaxArgs-1 {
		t.Errorf("mangled(%d) repeats the argument %d times", MaxArgs, got)
	}
}
