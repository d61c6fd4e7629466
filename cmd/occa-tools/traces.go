package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/libocca/occa-tools/formats/trace"
)

// openTrace opens a trace file for a command.
func openTrace(path string, salvage bool) (*trace.Reader, io.Closer, error) {
	r, c, err := trace.Open(path, trace.WithSalvage(salvage))
	if err != nil {
		return nil, nil, explain(err)
	}
	return r, c, nil
}

// explain adds to a trace error what the user can do about it.
func explain(err error) error {
	var te *trace.Error
	switch {
	case !errors.As(err, &te):
		return err
	case errors.Is(err, trace.ErrNoFinalStats):
		return fmt.Errorf("%w (if it is still running, wait for it to exit)", err)
	case te.Truncated():
		return fmt.Errorf("%w (the file was cut short; nothing after the cut can be recovered)", err)
	case te.Chunk >= 0:
		return fmt.Errorf("%w (run again with -salvage to skip the damaged part and read the rest)", err)
	}
	return err
}

// reportSalvage tells what a salvaging reader skipped.
func reportSalvage(env *Env, path string, r *trace.Reader) {
	if len(r.Problems()) == 0 {
		return
	}
	fmt.Fprintf(env.Stderr, "%s: salvaged: skipped %d damaged bytes, %d problems:\n", path, r.Skipped(), len(r.Problems()))
	for _, p := range r.Problems() {
		fmt.Fprintf(env.Stderr, "\t%v\n", p)
	}
}
