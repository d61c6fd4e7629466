// Package configs holds the default occa-tools config and one commented
// example per feature, embedded so the runtime ships the default and tests
// can load every example.
package configs

import (
	"embed"
	"io/fs"
)

//go:embed *.toml
var files embed.FS

// Default is the text of default.toml: every key with its default value.
var Default = mustRead("default.toml")

// All returns every embedded config by file name ("default.toml",
// "launch-window.toml", ...).
func All() map[string][]byte {
	out := map[string][]byte{}
	entries, _ := fs.ReadDir(files, ".")
	for _, e := range entries {
		out[e.Name()] = mustRead(e.Name())
	}
	return out
}

func mustRead(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		panic("configs: " + err.Error())
	}
	return b
}
