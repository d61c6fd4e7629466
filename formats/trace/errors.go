package trace

import (
	"errors"
	"fmt"
)

// Error reports broken input: where it is and what is wrong. Everything
// returned before it was read intact.
type Error struct {
	Offset int64 // byte offset of the broken header field or chunk
	Chunk  int   // index of the chunk (0 is the first after the header), -1 in the header
	Err    error // what is wrong; may wrap io.ErrUnexpectedEOF
}

func (e *Error) Error() string {
	if e.Chunk < 0 {
		return fmt.Sprintf("broken trace header at offset %d: %v", e.Offset, e.Err)
	}
	return fmt.Sprintf("broken trace at offset %d (chunk %d): %v; the events before it are readable", e.Offset, e.Chunk, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Truncated reports whether the error means that the file ends early (it was
// cut, or is still being written), as opposed to holding wrong bytes.
func (e *Error) Truncated() bool { return errors.Is(e.Err, errUnexpectedEOF) }

// Errors that callers may test for with errors.Is.
var (
	// ErrNotTrace: the file does not start with the trace magic.
	ErrNotTrace = errors.New("not an occa-tools trace")
	// ErrVersion: the trace's major format version is not 1, or its kind
	// table changes a kind this reader knows in a way it cannot read
	// (FORMAT.md §4).
	ErrVersion = errors.New("unsupported trace format version")
	// ErrChecksum: a CRC-32C did not match.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrNoFinalStats: the file ends at a chunk boundary but was not closed.
	ErrNoFinalStats = errors.New("trace ends without its final stats chunk")
)

// cutError wraps io.ErrUnexpectedEOF with what was being read.
type cutError struct{ msg string }

func (e *cutError) Error() string { return e.msg }
func (e *cutError) Unwrap() error { return errUnexpectedEOF }

func cutf(format string, args ...any) error { return &cutError{fmt.Sprintf(format, args...)} }

// wrapf attaches a sentinel to a message, so errors.Is finds it while the text
// reads as one sentence.
type sentinelError struct {
	msg string
	err error
}

func (e *sentinelError) Error() string { return e.msg }
func (e *sentinelError) Unwrap() error { return e.err }

func wrapf(sentinel error, format string, args ...any) error {
	return &sentinelError{fmt.Sprintf(format, args...), sentinel}
}
