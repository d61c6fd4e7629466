package config

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// OnError says what the runtime does when the config has errors.
type OnError uint8

const (
	OnErrorContinue OnError = iota // print the errors, run the program untraced
	OnErrorAbort                   // print the errors, exit with status 2
	numOnError
)

var onErrorNames = [numOnError]string{"continue", "abort"}

func (o OnError) String() string { return enumName(onErrorNames[:], int(o)) }

// Compression is the compression level of trace files. Its values equal
// trace.Level's: fastest is S2, the others zstd's levels (FORMAT.md §3).
type Compression uint8

const (
	CompressionFastest Compression = iota + 1 // S2
	CompressionDefault                        // zstd.SpeedDefault
	CompressionBetter                         // zstd.SpeedBetterCompression
	CompressionBest                           // zstd.SpeedBestCompression
	numCompression
)

var compressionNames = [numCompression]string{"", "fastest", "default", "better", "best"}

func (c Compression) String() string { return enumName(compressionNames[:], int(c)) }

// OnFull says what a thread does when no buffer is free.
type OnFull uint8

const (
	OnFullDrop OnFull = iota // drop the event and count it (a Dropped event follows)
	OnFullWait               // wait for the writer to free a buffer
	numOnFull
)

var onFullNames = [numOnFull]string{"drop", "wait"}

func (o OnFull) String() string { return enumName(onFullNames[:], int(o)) }

// OpenMPScope says which OpenMP activity the runtime's OMPT tool records.
type OpenMPScope uint8

const (
	OpenMPKernels OpenMPScope = iota // parallel regions begun inside recorded OCCA launches, and what they contain
	OpenMPAll                        // every parallel region and task of the process
	numOpenMPScope
)

var openMPScopeNames = [numOpenMPScope]string{"kernels", "all"}

func (o OpenMPScope) String() string { return enumName(openMPScopeNames[:], int(o)) }

// ClockSource selects the timestamp source.
type ClockSource uint8

const (
	ClockAuto      ClockSource = iota // tsc when invariant and calibrated, else monotonic
	ClockTSC                          // the time stamp counter
	ClockMonotonic                    // clock_gettime(CLOCK_MONOTONIC)
	numClockSource
)

var clockNames = [numClockSource]string{"auto", "tsc", "monotonic"}

func (c ClockSource) String() string { return enumName(clockNames[:], int(c)) }

// Level is a log level. Its values equal github.com/rs/zerolog's Level
// values, so zerolog.Level(l) converts.
type Level int8

const (
	LevelTrace    Level = -1
	LevelDebug    Level = 0
	LevelInfo     Level = 1
	LevelWarn     Level = 2
	LevelError    Level = 3
	LevelDisabled Level = 7
)

var levels = []struct {
	name  string
	level Level
}{{"trace", LevelTrace}, {"debug", LevelDebug}, {"info", LevelInfo}, {"warn", LevelWarn}, {"error", LevelError}, {"disabled", LevelDisabled}}

func (l Level) String() string {
	for _, x := range levels {
		if x.level == l {
			return x.name
		}
	}
	return "level(" + strconv.Itoa(int(l)) + ")"
}

// ParseLevel parses a log level name: trace, debug, info, warn, error or
// disabled, in any case (the runtime also uses it for OCCA_TOOLS_LOG_LEVEL).
func ParseLevel(s string) (Level, error) {
	for _, x := range levels {
		if strings.EqualFold(s, x.name) {
			return x.level, nil
		}
	}
	names := make([]string, len(levels))
	for i, x := range levels {
		names[i] = x.name
	}
	return 0, errors.New(notOneOf(s, names))
}

func enumName(names []string, i int) string {
	if i >= 0 && i < len(names) && names[i] != "" {
		return names[i]
	}
	return "invalid(" + strconv.Itoa(i) + ")"
}

// notOneOf is the message for a value outside a fixed set.
func notOneOf(v string, allowed []string) string {
	var list []string
	for _, a := range allowed {
		if a != "" {
			list = append(list, a)
		}
	}
	msg := fmt.Sprintf("%q is not one of %s", v, strings.Join(list, ", "))
	if s := suggest(v, list); s != "" {
		msg += " (did you mean " + s + "?)"
	}
	return msg
}

var sizeUnits = []struct {
	name  string
	shift uint
}{{"B", 0}, {"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40}}

// ParseSize parses a byte count: a plain number of bytes ("4096") or a
// number with a binary unit B, KiB, MiB, GiB or TiB ("64MiB", "1 GiB",
// "1.5GiB"); units are matched case-insensitively. The result must be a whole
// number of bytes that fits in a uint64.
func ParseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	j := 0
	for j < len(t) && (t[j] >= '0' && t[j] <= '9' || t[j] == '.') {
		j++
	}
	num, unit := t[:j], strings.TrimSpace(t[j:])
	if num == "" || strings.Count(num, ".") > 1 || num == "." {
		return 0, fmt.Errorf("bad size %q: want a number of bytes, optionally with a unit B, KiB, MiB, GiB or TiB (\"64MiB\")", s)
	}
	shift := uint(0)
	found := unit == ""
	for _, u := range sizeUnits {
		if strings.EqualFold(unit, u.name) {
			shift, found = u.shift, true
		}
	}
	if !found {
		return 0, fmt.Errorf("bad size %q: unit %q is not one of B, KiB, MiB, GiB, TiB", s, unit)
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, fmt.Errorf("bad size %q: want a number of bytes, optionally with a unit B, KiB, MiB, GiB or TiB (\"64MiB\")", s)
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), shift)))
	if !r.IsInt() {
		return 0, fmt.Errorf("bad size %q: not a whole number of bytes", s)
	}
	n := r.Num()
	if !n.IsUint64() {
		return 0, fmt.Errorf("bad size %q: too large", s)
	}
	return n.Uint64(), nil
}

// FormatSize writes n with the largest binary unit that divides it exactly
// ("64MiB", "1536B" is "1536B", 0 is "0B").
func FormatSize(n uint64) string {
	for i := len(sizeUnits) - 1; i > 0; i-- {
		u := sizeUnits[i]
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatUint(n>>u.shift, 10) + u.name
		}
	}
	return strconv.FormatUint(n, 10) + "B"
}

// formatDuration writes d in the largest unit that divides it exactly
// ("10ms", "60s"), which reads better in range messages than d.String().
func formatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	case d%time.Millisecond == 0:
		return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
	case d%time.Microsecond == 0:
		return strconv.FormatInt(int64(d/time.Microsecond), 10) + "us"
	}
	return strconv.FormatInt(int64(d), 10) + "ns"
}

// Signal numbers as Linux (x86-64, arm64, ppc64le) numbers them. SIGRTMIN is
// glibc's value; a runtime on another libc translates SigRTMin+N to its own
// SIGRTMIN+N.
const (
	SigUSR1   = 10
	SigUSR2   = 12
	SigRTMin  = 34
	maxRTPlus = 8
)

const allowedSignals = "allowed: SIGUSR1, SIGUSR2, SIGRTMIN+N (N 0..8)"

// Signals a program or the tool needs for itself, refused by name.
var refusedSignals = map[string]bool{
	"HUP": true, "INT": true, "QUIT": true, "ILL": true, "TRAP": true, "ABRT": true, "IOT": true,
	"BUS": true, "FPE": true, "KILL": true, "SEGV": true, "PIPE": true, "ALRM": true, "TERM": true,
	"STKFLT": true, "CHLD": true, "CONT": true, "STOP": true, "TSTP": true, "TTIN": true, "TTOU": true,
	"URG": true, "XCPU": true, "XFSZ": true, "VTALRM": true, "PROF": true, "WINCH": true, "IO": true,
	"POLL": true, "PWR": true, "SYS": true, "RTMAX": true,
}

// ParseSignal parses the name of a toggle signal and returns its number and
// canonical name. Accepted, in any case, with or without the SIG prefix:
// SIGUSR1, SIGUSR2, SIGRTMIN and SIGRTMIN+N for N in 0..8. The empty string
// means no signal (0, "").
func ParseSignal(s string) (int, string, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if t == "" {
		return 0, "", nil
	}
	t = strings.TrimPrefix(t, "SIG")
	switch {
	case t == "USR1":
		return SigUSR1, "SIGUSR1", nil
	case t == "USR2":
		return SigUSR2, "SIGUSR2", nil
	case t == "RTMIN":
		return SigRTMin, "SIGRTMIN+0", nil
	case strings.HasPrefix(t, "RTMIN+"):
		n, err := strconv.Atoi(t[len("RTMIN+"):])
		if err != nil || n < 0 || n > maxRTPlus || strings.HasPrefix(t[len("RTMIN+"):], "+") {
			return 0, "", fmt.Errorf("%q is out of range; %s", s, allowedSignals)
		}
		return SigRTMin + n, "SIGRTMIN+" + strconv.Itoa(n), nil
	case refusedSignals[t] || strings.HasPrefix(t, "RTMAX"):
		return 0, "", fmt.Errorf("%q cannot be used; %s", s, allowedSignals)
	}
	return 0, "", fmt.Errorf("%q is not a signal name; %s", s, allowedSignals)
}

// Name pattern tokens.
var nameTokens = []string{"exe", "host", "pid", "rank", "time"}

// ValidateName checks an output.name pattern: only the tokens {exe} {host}
// {pid} {rank} {time}, braces balanced, {pid} present, no '/' and no NUL.
func ValidateName(pattern string) error {
	if pattern == "" {
		return errors.New("must not be empty")
	}
	if strings.Contains(pattern, "/") {
		return fmt.Errorf("%q must not contain '/' (put directories in output.directory)", pattern)
	}
	if strings.Contains(pattern, "\x00") {
		return fmt.Errorf("%q must not contain a NUL byte (no file name can)", pattern)
	}
	hasPID := false
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '}':
			return fmt.Errorf("unmatched '}' in %q", pattern)
		case '{':
			j := strings.IndexAny(pattern[i+1:], "{}")
			if j < 0 || pattern[i+1+j] != '}' {
				return fmt.Errorf("unclosed '{' in %q", pattern)
			}
			tok := pattern[i+1 : i+1+j]
			known := false
			for _, t := range nameTokens {
				known = known || tok == t
			}
			if !known {
				return fmt.Errorf("unknown token {%s} in %q; allowed: {exe} {host} {pid} {rank} {time}", tok, pattern)
			}
			hasPID = hasPID || tok == "pid"
			i += j + 1
		}
	}
	if !hasPID {
		return fmt.Errorf("%q must contain {pid}", pattern)
	}
	return nil
}

// NameVars are the values of the output.name tokens.
type NameVars struct {
	Exe  string    // executable base name
	Host string    // host name
	PID  int       // process id
	Rank int       // MPI rank, or -1 when there is none ("x")
	Time time.Time // process start; written in UTC as yyyymmddThhmmss
}

// ExpandName replaces the tokens of a valid pattern by their values. Any '/'
// or NUL in a value becomes '_'.
func ExpandName(pattern string, v NameVars) string {
	clean := strings.NewReplacer("/", "_", "\x00", "_")
	rank := "x"
	if v.Rank >= 0 {
		rank = strconv.Itoa(v.Rank)
	}
	return strings.NewReplacer(
		"{exe}", clean.Replace(v.Exe),
		"{host}", clean.Replace(v.Host),
		"{pid}", strconv.Itoa(v.PID),
		"{rank}", rank,
		"{time}", v.Time.UTC().Format("20060102T150405"),
	).Replace(pattern)
}
