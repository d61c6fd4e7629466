package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// Header describes the traced process and its clock (FORMAT.md §2).
type Header struct {
	// Major and Minor are the format version the file was written with;
	// the writer ignores them and writes FormatMajor.FormatMinor.
	Major, Minor uint16

	// Clock. Every time in the trace is CLOCK_MONOTONIC ns; wall clock time
	// is time - MonoStart + WallStart.
	ClockSource string  // "tsc" or "monotonic"
	TSCHz       float64 // TSC ticks per second, 0 for monotonic
	TSC0        uint64  // TSC reading of the calibration pair
	Mono0       int64   // CLOCK_MONOTONIC ns read with TSC0
	WallStart   int64   // unix ns at start
	MonoStart   int64   // CLOCK_MONOTONIC ns read with WallStart

	// Process.
	Host       string
	PID        int64
	PPID       int64
	Rank       int64  // -1 when not launched by an MPI-style launcher
	WorldSize  int64  // -1 when none
	RankSource string // launcher variable that gave Rank and WorldSize
	Executable string
	Cmdline    []string

	// Tool.
	ToolVersion string
	ABIVersion  uint32
	ConfigPath  string
	ConfigText  string
	BufferSize  uint64 // bytes per thread buffer
	BufferCount uint64 // buffer memory in units of BufferSize (FORMAT.md §2)
	MemoryLimit uint64 // byte limit of the pool

	// Kinds is the file's kind table (FORMAT.md §4): how each kind's events
	// or defs are encoded. The reader fills it, shared with the other
	// headers read with the same table: it is read-only. The writer
	// ignores it and writes KindTable().
	Kinds []KindDesc

	// Unknown holds fields this version does not know, in file order, so a
	// converter can carry them over.
	Unknown []HeaderField
}

// HeaderField is one raw header field (FORMAT.md §2).
type HeaderField struct {
	Tag   uint64
	Value []byte
}

// Header field tags (FORMAT.md §2).
const (
	tagClockSource = 1 + iota
	tagTSCHz
	tagTSC0
	tagMono0
	tagWallStart
	tagMonoStart
	tagHost
	tagPID
	tagPPID
	tagRank
	tagWorldSize
	tagRankSource
	tagExecutable
	tagCmdline
	tagToolVersion
	tagABIVersion
	tagConfigPath
	tagConfigText
	tagBufferSize
	tagBufferCount
	tagMemoryLimit
	tagKinds
)

// WallTime converts a trace time to unix ns.
func (h *Header) WallTime(t int64) int64 { return t - h.MonoStart + h.WallStart }

// appendBody appends the header fields (FORMAT.md §2), with kinds as the
// kind table.
func (h *Header) appendBody(b []byte, kinds []KindDesc) []byte {
	field := func(tag uint64, v []byte) {
		b = appendUvarint(b, tag)
		b = appendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	str := func(tag uint64, s string) {
		b = appendUvarint(b, tag)
		b = appendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	var tmp [16]byte
	putUint := func(tag, v uint64) { field(tag, appendUvarint(tmp[:0], v)) }
	putInt := func(tag uint64, v int64) { field(tag, appendVarint(tmp[:0], v)) }

	str(tagClockSource, h.ClockSource)
	field(tagTSCHz, binary.LittleEndian.AppendUint64(tmp[:0], math.Float64bits(h.TSCHz)))
	putUint(tagTSC0, h.TSC0)
	putInt(tagMono0, h.Mono0)
	putInt(tagWallStart, h.WallStart)
	putInt(tagMonoStart, h.MonoStart)
	str(tagHost, h.Host)
	putInt(tagPID, h.PID)
	putInt(tagPPID, h.PPID)
	putInt(tagRank, h.Rank)
	putInt(tagWorldSize, h.WorldSize)
	str(tagRankSource, h.RankSource)
	str(tagExecutable, h.Executable)
	var argv []byte
	argv = appendUvarint(argv, uint64(len(h.Cmdline)))
	for _, a := range h.Cmdline {
		argv = appendUvarint(argv, uint64(len(a)))
		argv = append(argv, a...)
	}
	field(tagCmdline, argv)
	str(tagToolVersion, h.ToolVersion)
	putUint(tagABIVersion, uint64(h.ABIVersion))
	str(tagConfigPath, h.ConfigPath)
	str(tagConfigText, h.ConfigText)
	putUint(tagBufferSize, h.BufferSize)
	putUint(tagBufferCount, h.BufferCount)
	putUint(tagMemoryLimit, h.MemoryLimit)
	field(tagKinds, appendKindTable(nil, kinds))
	for _, f := range h.Unknown {
		if f.Tag == tagKinds {
			continue // the writer's own table is the only one that matches its chunks
		}
		field(f.Tag, f.Value)
	}
	return b
}

// parseBody fills h from the header fields. The error names the field. The
// kind table is required.
func (h *Header) parseBody(b []byte) error {
	h.Rank, h.WorldSize = -1, -1
	kinds := false
	for i := 0; i < len(b); {
		tag, j, ok := uvarint(b, i)
		if !ok {
			return fmt.Errorf("header field at body byte %d: bad tag varint", i)
		}
		n, j, ok := uvarint(b, j)
		if !ok || n > uint64(len(b)-j) {
			return fmt.Errorf("header field %d at body byte %d: length runs past the header", tag, i)
		}
		v := b[j : j+int(n)]
		i = j + int(n)
		if err := h.setField(tag, v); err != nil {
			return fmt.Errorf("header field %s: %v", fieldName(tag), err)
		}
		kinds = kinds || tag == tagKinds
	}
	if !kinds {
		return errors.New("the header has no kind table (field kinds): the file was not written by a format 1.0 writer")
	}
	return nil
}

var errFieldValue = errors.New("value does not parse")

func (h *Header) setField(tag uint64, v []byte) error {
	getUint := func() (uint64, error) {
		x, n, ok := uvarint(v, 0)
		if !ok || n != len(v) {
			return 0, errFieldValue
		}
		return x, nil
	}
	getInt := func() (int64, error) {
		x, err := getUint()
		return unzigzag(x), err
	}
	var err error
	switch tag {
	case tagClockSource:
		h.ClockSource = validText(string(v))
	case tagTSCHz:
		if len(v) != 8 {
			return errFieldValue
		}
		h.TSCHz = math.Float64frombits(binary.LittleEndian.Uint64(v))
	case tagTSC0:
		h.TSC0, err = getUint()
	case tagMono0:
		h.Mono0, err = getInt()
	case tagWallStart:
		h.WallStart, err = getInt()
	case tagMonoStart:
		h.MonoStart, err = getInt()
	case tagHost:
		h.Host = validText(string(v))
	case tagPID:
		h.PID, err = getInt()
	case tagPPID:
		h.PPID, err = getInt()
	case tagRank:
		h.Rank, err = getInt()
	case tagWorldSize:
		h.WorldSize, err = getInt()
	case tagRankSource:
		h.RankSource = validText(string(v))
	case tagExecutable:
		h.Executable = validText(string(v))
	case tagCmdline:
		h.Cmdline, err = parseStrings(v)
	case tagToolVersion:
		h.ToolVersion = validText(string(v))
	case tagABIVersion:
		var x uint64
		x, err = getUint()
		if err == nil && x > math.MaxUint32 {
			err = errFieldValue
		}
		h.ABIVersion = uint32(x)
	case tagConfigPath:
		h.ConfigPath = validText(string(v))
	case tagConfigText:
		h.ConfigText = validText(string(v))
	case tagBufferSize:
		h.BufferSize, err = getUint()
	case tagBufferCount:
		h.BufferCount, err = getUint()
	case tagMemoryLimit:
		h.MemoryLimit, err = getUint()
	case tagKinds:
		var k *readKinds
		if k, err = parseKinds(v); err == nil {
			h.Kinds = k.descs
		}
	default:
		h.Unknown = append(h.Unknown, HeaderField{tag, append([]byte(nil), v...)})
	}
	return err
}

func parseStrings(v []byte) ([]string, error) {
	n, i, ok := uvarint(v, 0)
	if !ok || n > uint64(len(v)) { // each string takes at least its length byte
		return nil, errFieldValue
	}
	s := make([]string, 0, n)
	for k := uint64(0); k < n; k++ {
		l, j, ok := uvarint(v, i)
		if !ok || l > uint64(len(v)-j) {
			return nil, errFieldValue
		}
		s = append(s, validText(string(v[j:j+int(l)])))
		i = j + int(l)
	}
	if i != len(v) {
		return nil, errFieldValue
	}
	return s, nil
}

var fieldNames = [...]string{
	tagClockSource: "clock_source", tagTSCHz: "tsc_hz", tagTSC0: "tsc0", tagMono0: "mono0",
	tagWallStart: "wall_start", tagMonoStart: "mono_start", tagHost: "host", tagPID: "pid",
	tagPPID: "ppid", tagRank: "rank", tagWorldSize: "world_size", tagRankSource: "rank_source",
	tagExecutable: "executable", tagCmdline: "cmdline", tagToolVersion: "tool_version",
	tagABIVersion: "abi_version", tagConfigPath: "config_path", tagConfigText: "config_text",
	tagBufferSize: "buffer_size", tagBufferCount: "buffer_count", tagMemoryLimit: "memory_limit",
	tagKinds: "kinds",
}

func fieldName(tag uint64) string {
	if tag < uint64(len(fieldNames)) && fieldNames[tag] != "" {
		return fieldNames[tag]
	}
	return fmt.Sprintf("%d", tag)
}

// validText is s with every invalid UTF-8 sequence replaced by U+FFFD. The
// runtime stores names and the command line as the program gave them
// (FORMAT.md §2, §6); readers hand out valid text, so that every output is
// (Parquet's UTF8 strings, JSON, CSV that engines read).
func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
