package trace

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"
)

// Dump writes a text form of the trace: the header, then one line per
// record with names resolved, e.g.
//
//	0.000012345 t1 run_begin corr=5 kernel=2(axpy) device=1(CUDA:0) stream=0
//
// Times are seconds since the header's mono_start, to the nanosecond. The
// format is stable: golden tests and `occa-tools dump` rely on it. Dump
// returns nil at the clean end of the trace and the reader's error otherwise,
// after writing every record before it.
func Dump(w io.Writer, r *Reader) error {
	return DumpN(w, r, -1)
}

// DumpN is Dump limited to the first n records (all when n < 0).
func DumpN(w io.Writer, r *Reader, n int) error {
	bw := bufio.NewWriter(w)
	var line []byte
	for _, l := range HeaderLines(r.Header()) {
		bw.WriteString(l)
		bw.WriteByte('\n')
	}
	var err error
	for ; n != 0; n-- {
		var rec Record
		rec, err = r.Next()
		if err != nil {
			break
		}
		line = AppendRecord(line[:0], r.Header(), r.Dict(), &rec)
		line = append(line, '\n')
		if _, werr := bw.Write(line); werr != nil {
			return werr
		}
	}
	if ferr := bw.Flush(); ferr != nil {
		return ferr
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// HeaderLines returns the header as "header key=value" lines.
func HeaderLines(h *Header) []string {
	q := strconv.Quote
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	argv := make([]string, len(h.Cmdline))
	for k, a := range h.Cmdline {
		argv[k] = q(a)
	}
	lines := []string{
		"header format=" + u(uint64(h.Major)) + "." + u(uint64(h.Minor)),
		"header host=" + q(h.Host) + " pid=" + i(h.PID) + " ppid=" + i(h.PPID),
		"header rank=" + i(h.Rank) + " world_size=" + i(h.WorldSize) + " rank_source=" + q(h.RankSource),
		"header executable=" + q(h.Executable),
		"header cmdline=[" + strings.Join(argv, " ") + "]",
		"header clock=" + q(h.ClockSource) + " tsc_hz=" + strconv.FormatFloat(h.TSCHz, 'g', -1, 64) + " tsc0=" + u(h.TSC0) + " mono0=" + i(h.Mono0),
		"header wall_start=" + time.Unix(0, h.WallStart).UTC().Format(time.RFC3339Nano) + " mono_start=" + i(h.MonoStart),
		"header tool_version=" + q(h.ToolVersion) + " abi_version=" + u(uint64(h.ABIVersion)),
		"header buffer_size=" + u(h.BufferSize) + " buffer_count=" + u(h.BufferCount) + " memory_limit=" + u(h.MemoryLimit),
		"header config_path=" + q(h.ConfigPath),
		"header config_text=" + q(h.ConfigText),
	}
	for _, f := range h.Unknown {
		lines = append(lines, "header field"+u(f.Tag)+"="+q(string(f.Value)))
	}
	// The kind table only where it differs from kinds.go: kinds and
	// arguments from a newer writer (FORMAT.md §4).
	for i := range h.Kinds {
		if !sameAsCompiled(&h.Kinds[i]) {
			lines = append(lines, kindLine(&h.Kinds[i]))
		}
	}
	return lines
}

// AppendRecord appends the text form of rec (no newline), resolving ids with d.
// Arguments are named as h's kind table names them; a kind this package does
// not know reads "kind(N)".
func AppendRecord(b []byte, h *Header, d *Dict, rec *Record) []byte {
	switch rec.Type {
	case RecordEvent:
		e := &rec.Event
		b = appendSeconds(b, e.Time-h.MonoStart)
		b = append(b, " t"...)
		b = strconv.AppendUint(b, uint64(e.Thread), 10)
		b = append(b, ' ')
		b = append(b, e.Kind.String()...)
		b = appendArgs(b, h, d, e.Kind, &e.Args, e.Time)
	case RecordDef:
		b = append(b, rec.Def.Kind.String()...)
		b = appendArgs(b, h, d, rec.Def.Kind, &rec.Def.Args, 0)
		if kd := h.KindDesc(rec.Def.Kind); kd != nil && kd.Text || kd == nil && rec.Def.Kind == DefString {
			b = append(b, ' ')
			b = strconv.AppendQuote(b, rec.Def.Text)
		}
	case RecordClock:
		b = append(b, "clock"...)
		for _, c := range rec.Clock {
			b = append(b, " tsc="...)
			b = strconv.AppendUint(b, c.TSC, 10)
			b = append(b, ",mono="...)
			b = appendSeconds(b, c.Mono-h.MonoStart)
		}
	case RecordStats:
		s := rec.Stats
		b = append(b, "stats final="...)
		if s.Final {
			b = append(b, '1')
		} else {
			b = append(b, '0')
		}
		b = append(b, " end="...)
		b = appendSeconds(b, s.End-h.MonoStart)
		b = append(b, " bytes="...)
		b = strconv.AppendUint(b, s.Bytes, 10)
		b = append(b, " clamped="...)
		b = strconv.AppendUint(b, s.Clamped, 10)
		b = append(b, " events="...)
		b = appendCounts(b, s.Events[:], func(i int) string { return Kind(i).String() })
		b = append(b, " dropped="...)
		b = appendCounts(b, s.Dropped[:], func(i int) string { return DropReasonName(uint64(i)) })
	}
	return b
}

func appendCounts(b []byte, c []uint64, name func(int) string) []byte {
	some := false
	for i, v := range c {
		if v == 0 {
			continue
		}
		if some {
			b = append(b, ',')
		}
		some = true
		b = append(b, name(i)...)
		b = append(b, ':')
		b = strconv.AppendUint(b, v, 10)
	}
	if !some {
		b = append(b, "none"...)
	}
	return b
}

// appendSeconds appends ns as seconds with nine decimals.
func appendSeconds(b []byte, ns int64) []byte {
	u := uint64(ns)
	if ns < 0 {
		b = append(b, '-')
		u = -u
	}
	b = strconv.AppendUint(b, u/1e9, 10)
	b = append(b, '.')
	frac := u % 1e9
	var tmp [9]byte
	for i := 8; i >= 0; i-- {
		tmp[i] = byte('0' + frac%10)
		frac /= 10
	}
	return append(b, tmp[:]...)
}

// appendArgs appends " name=value" for each argument of kind k that args
// holds, as h's kind table has them (kinds.go's when h has no table).
func appendArgs(b []byte, h *Header, d *Dict, k Kind, args *[MaxArgs]uint64, t int64) []byte {
	var list []Arg
	if kd := h.KindDesc(k); kd != nil {
		list = kd.Args
	} else if s := k.Spec(); s != nil {
		list = s.Args
	}
	for j, a := range list[:min(len(list), MaxArgs)] {
		v := args[j]
		b = append(b, ' ')
		b = append(b, a.Name...)
		b = append(b, '=')
		switch a.Type {
		case ArgInt:
			b = strconv.AppendInt(b, int64(v), 10)
			continue
		case ArgTime:
			switch {
			case v == 0:
				b = append(b, '0')
			case k == DeviceTime && a.Name == "end" && j > 0 && args[j-1] == 0:
				// A source that knows only the duration sends start 0 and
				// end = duration (occa_tools.h).
				b = strconv.AppendUint(b, v, 10)
				b = append(b, "ns(duration)"...)
			default:
				b = appendSeconds(b, int64(v)-h.MonoStart)
			}
			continue
		}
		b = strconv.AppendUint(b, v, 10)
		if v == 0 && a.Type != ArgUint && a.Type != ArgThread {
			continue // id 0 means none (kinds.go)
		}
		var name string
		switch a.Type {
		case ArgString:
			b = append(b, '(')
			b = strconv.AppendQuote(b, d.String(v))
			b = append(b, ')')
			continue
		case ArgDevice:
			name = d.Device(v).Name()
		case ArgKernel:
			name = d.Kernel(v).Name
		case ArgMemory:
			name = d.Memory(v).Tag
		case ArgThread:
			name = d.Thread(v).Name
		case ArgUint:
			name = enumName(k, a.Name, v)
		}
		if name != "" {
			b = append(b, '(')
			b = append(b, name...)
			b = append(b, ')')
		}
	}
	return b
}

// enumName names the values of the enumerated arguments of kinds.go.
func enumName(k Kind, arg string, v uint64) string {
	switch {
	case k == CopyBegin && arg == "direction":
		if v&^7 != 0 {
			return ""
		}
		if v&CopyAsync != 0 {
			return CopyDirectionName(v) + "|async"
		}
		return CopyDirectionName(v)
	case k == BuildEnd && arg == "cache":
		switch v {
		case CacheHit:
			return "hit"
		case CacheMiss:
			return "miss"
		}
	case k == Dropped && arg == "reason":
		return DropReasonName(v)
	case k == Trigger && arg == "action":
		return TriggerActionName(v)
	case k == Trigger && arg == "cause":
		return TriggerCauseName(v)
	}
	return ""
}
