package config

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path"
	"regexp"
	"regexp/syntax"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/libocca/occa-tools/formats/trace"
)

// MaxWindows is the most [[trigger.window]] tables a config may have.
const MaxWindows = 16

// Limits on what Parse accepts, checked before the TOML parser runs (see
// keyLines). Real configs are a few KiB, keys at most 4 levels deep and 30
// bytes long; the worst texts found within these limits cost Parse about
// 40 MB of allocation and 0.1 to 0.3 s on a busy machine.
const (
	MaxSize    = 64 << 10 // bytes of text
	MaxDepth   = 16       // steps of a key path: trigger.window[2].from is 4
	MaxKeyPath = 256      // bytes of a key path as messages write it
	MaxString  = 4096     // bytes of one string value
)

// Parse reads a config from text, laid over Default. name is used in error
// messages ("trace.toml:12: ...").
//
// Parsing is strict: an unknown key, a value of the wrong type or outside
// its range is an error. All errors are collected and returned together as
// Errors, sorted by line. Parse always returns a usable config: a key with
// an error keeps its default (a bad [[tag]] or [[trigger.window]] is left
// out), and when the text is not valid TOML at all, or passes one of the
// limits above, the config is Default (except that a top-level on_error =
// "abort" is still honoured). Text and Name are set in every case.
func Parse(name string, text []byte) (cfg *Config, err error) {
	cfg = Default()
	cfg.Name, cfg.Text = name, string(text)
	defer func() {
		// No input may crash the program that reads it: a panic in the
		// TOML parser or in this package is one more config error.
		if r := recover(); r != nil {
			cfg = unparsed(name, text)
			err = Errors{{File: name, Msg: fmt.Sprintf("internal error while reading the config (%v); please report it, with the file", r)}}
		}
	}()
	if len(text) > MaxSize {
		return unparsed(name, text), Errors{{File: name,
			Msg: fmt.Sprintf("larger than %s; a config is a few KiB of TOML: check that this is the file you meant", FormatSize(MaxSize))}}
	}
	lines, over := keyLines(string(text))
	if over != nil {
		over.File = name
		return unparsed(name, text), Errors{over}
	}
	d := &decoder{file: name, set: map[string]int{}, lines: lines}

	var raw map[string]any
	if _, err := toml.Decode(string(text), &raw); err != nil {
		var pe toml.ParseError
		msg, line := err.Error(), 0
		if errors.As(err, &pe) {
			msg, line = pe.Message, pe.Position.Line
			if line <= 0 { // some lexer errors at the end of input carry no line
				end := len(text)
				if pe.Position.Start > 0 && pe.Position.Start < end {
					end = pe.Position.Start
				}
				line = 1 + bytes.Count(text[:end], []byte("\n"))
			}
		}
		return unparsed(name, text), Errors{{File: name, Line: line, Msg: "TOML syntax: " + msg}}
	}
	d.table(nil, rootTable, raw, cfg)
	d.check(cfg)
	if len(d.errs) == 0 {
		return cfg, nil
	}
	d.errs.sort()
	return cfg, d.errs
}

// unparsed is the config of a text that could not be parsed: Default, with
// on_error = "abort" when a line before the first table says so.
func unparsed(name string, text []byte) *Config {
	cfg := Default()
	cfg.Name, cfg.Text = name, string(text)
	if abortLine(string(text[:min(len(text), MaxSize)])) {
		cfg.OnError = OnErrorAbort
	}
	return cfg
}

var abortRE = regexp.MustCompile(`^\s*on_error\s*=\s*["']abort["']\s*(#.*)?$`)

// abortLine looks for on_error = "abort" before the first table header of a
// file that is not valid TOML.
func abortLine(text string) bool {
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			return false
		}
		if abortRE.MatchString(l) {
			return true
		}
	}
	return false
}

// decoder walks the decoded TOML tree against the schema.
type decoder struct {
	file  string
	lines map[string]int // path -> line, from keyLines
	set   map[string]int // leaf keys the file set (and decoded without error) -> line
	errs  Errors
}

// line is the line of p, or of its nearest ancestor the scanner knows.
func (d *decoder) line(p *keyPath) int {
	for q := p; q != nil; q = q.up {
		if l, ok := d.lines[q.str]; ok {
			return l
		}
	}
	return 0
}

// errorf records a problem with key p; the message starts with the key.
func (d *decoder) errorf(p *keyPath, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: d.line(p), Key: p.String(),
		Msg: p.String() + ": " + fmt.Sprintf(format, args...)})
}

// A table is one level of the schema.
type table struct {
	fields []*field
}

func (t *table) get(name string) *field {
	for _, f := range t.fields {
		if f.name == name {
			return f
		}
	}
	return nil
}

func (t *table) names() []string {
	n := make([]string, len(t.fields))
	for i, f := range t.fields {
		n[i] = f.name
	}
	return n
}

// A field is a key of the schema: a leaf (decode), a table (sub) or an
// array of tables (elems).
type field struct {
	name   string
	decode func(d *decoder, p *keyPath, v any, dst any) bool
	sub    *table
	elems  *elems
}

// elems describes an array of tables: how to make an element, check it once
// its keys are decoded, and store the valid ones.
type elems struct {
	table *table
	make  func() any
	check func(d *decoder, p *keyPath, elem any, keys map[string]any) bool
	store func(dst any, elems []any)
}

func (d *decoder) table(p *keyPath, t *table, m map[string]any, dst any) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		li, lj := d.line(p.child(keys[i])), d.line(p.child(keys[j]))
		if li != lj {
			return li < lj
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		kp, v := p.child(k), m[k]
		f := t.get(k)
		switch {
		case f == nil:
			msg := "unknown key " + kp.String()
			if s := suggest(k, t.names()); s != "" {
				msg += " (did you mean " + s + "?)"
			}
			d.errs = append(d.errs, &Error{File: d.file, Line: d.line(kp), Key: kp.String(), Msg: msg})
		case f.sub != nil:
			sub, ok := v.(map[string]any)
			if !ok {
				d.errorf(kp, "expected a table ([%s]), got %s", kp, describe(v))
				continue
			}
			d.table(kp, f.sub, sub, dst)
		case f.elems != nil:
			list, ok := tableList(v)
			if !ok {
				d.errorf(kp, "expected an array of tables ([[%s]]), got %s", kp, describe(v))
				continue
			}
			var good []any
			for i, em := range list {
				ep := kp.index(i)
				e := f.elems.make()
				n := len(d.errs)
				d.table(ep, f.elems.table, em, e)
				if f.elems.check(d, ep, e, em) && len(d.errs) == n {
					good = append(good, e)
				}
			}
			f.elems.store(dst, good)
		default:
			if n := longestString(v); n > MaxString {
				d.errorf(kp, "a string of %d bytes; at most %d are allowed", n, MaxString)
				continue
			}
			if f.decode(d, kp, v, dst) {
				d.set[kp.String()] = d.line(kp)
			}
		}
	}
}

// longestString is the length of the longest string in v, a value or an
// array (whose nesting keyLines bounded).
func longestString(v any) int {
	switch x := v.(type) {
	case string:
		return len(x)
	case []any:
		n := 0
		for _, e := range x {
			n = max(n, longestString(e))
		}
		return n
	}
	return 0
}

// tableList accepts both [[a]] tables and a = [{...}, {...}].
func tableList(v any) ([]map[string]any, bool) {
	switch x := v.(type) {
	case []map[string]any:
		return x, true
	case []any:
		out := make([]map[string]any, len(x))
		for i, e := range x {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, false
			}
			out[i] = m
		}
		return out, true
	}
	return nil, false
}

// describe names a TOML value's type, with the value when it is short.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 40 {
			return "a long string"
		}
		return "string " + strconv.Quote(x)
	case int64:
		return "integer " + strconv.FormatInt(x, 10)
	case float64:
		return "float " + strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return "boolean " + strconv.FormatBool(x)
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	case []any:
		return "an array"
	case time.Time:
		return "a datetime"
	}
	return fmt.Sprintf("a %T", v)
}

// ---- leaf converters: each reports its own errors and says whether it
// produced a value.

type conv[V any] func(d *decoder, p *keyPath, v any) (V, bool)

// leaf makes a field of struct type T whose value is stored through ptr.
func leaf[T, V any](name string, c conv[V], ptr func(*T) *V) *field {
	return &field{name: name, decode: func(d *decoder, p *keyPath, v any, dst any) bool {
		x, ok := c(d, p, v)
		if ok {
			*ptr(dst.(*T)) = x
		}
		return ok
	}}
}

func sub(name string, fields ...*field) *field {
	return &field{name: name, sub: &table{fields: fields}}
}

func str(check func(string) error) conv[string] {
	return func(d *decoder, p *keyPath, v any) (string, bool) {
		s, ok := v.(string)
		if !ok {
			d.errorf(p, "expected a string, got %s", describe(v))
			return "", false
		}
		if check != nil {
			if err := check(s); err != nil {
				d.errorf(p, "%s", err)
				return "", false
			}
		}
		return s, true
	}
}

func nonEmpty(s string) error {
	if s == "" {
		return errors.New("must not be empty")
	}
	return nil
}

func enum[E any](names []string, values []E) conv[E] {
	return func(d *decoder, p *keyPath, v any) (E, bool) {
		var zero E
		s, ok := v.(string)
		if !ok {
			d.errorf(p, "expected a string, got %s", describe(v))
			return zero, false
		}
		for i, n := range names {
			if n != "" && n == s {
				return values[i], true
			}
		}
		d.errorf(p, "%s", notOneOf(s, names))
		return zero, false
	}
}

func boolean(d *decoder, p *keyPath, v any) (bool, bool) {
	b, ok := v.(bool)
	if !ok {
		d.errorf(p, "expected true or false, got %s", describe(v))
	}
	return b, ok
}

func count(min uint64) conv[uint64] {
	return func(d *decoder, p *keyPath, v any) (uint64, bool) {
		n, ok := v.(int64)
		switch {
		case !ok:
			d.errorf(p, "expected an integer, got %s", describe(v))
			return 0, false
		case n < 0 || uint64(n) < min:
			d.errorf(p, "%d is out of range (must be >= %d)", n, min)
			return 0, false
		}
		return uint64(n), true
	}
}

func size(min, max uint64) conv[uint64] {
	return func(d *decoder, p *keyPath, v any) (uint64, bool) {
		var n uint64
		switch x := v.(type) {
		case int64:
			if x < 0 {
				d.errorf(p, "%d is negative; want a size in bytes or a string such as \"64MiB\"", x)
				return 0, false
			}
			n = uint64(x)
		case string:
			var err error
			if n, err = ParseSize(x); err != nil {
				d.errorf(p, "%s", err)
				return 0, false
			}
		default:
			d.errorf(p, "expected a size (bytes, or a string such as \"64MiB\"), got %s", describe(v))
			return 0, false
		}
		if n < min || n > max {
			d.errorf(p, "%s is out of range %s..%s", FormatSize(n), FormatSize(min), FormatSize(max))
			return 0, false
		}
		return n, true
	}
}

func duration(min, max time.Duration) conv[time.Duration] {
	return func(d *decoder, p *keyPath, v any) (time.Duration, bool) {
		s, ok := v.(string)
		if !ok {
			d.errorf(p, "expected a duration string such as \"250ms\" or \"1s\", got %s", describe(v))
			return 0, false
		}
		t, err := time.ParseDuration(s)
		if err != nil {
			d.errorf(p, "%q is not a duration (write it like \"250ms\", \"1s\", \"2m\")", s)
			return 0, false
		}
		if t < min || t > max {
			if max == math.MaxInt64 {
				d.errorf(p, "%s is out of range (must be >= %s)", formatDuration(t), formatDuration(min))
			} else {
				d.errorf(p, "%s is out of range %s..%s", formatDuration(t), formatDuration(min), formatDuration(max))
			}
			return 0, false
		}
		return t, true
	}
}

// list decodes an array whose elements each go through elem; on any bad
// element the whole key keeps its default.
func list[V any](elem conv[V]) conv[[]V] {
	return func(d *decoder, p *keyPath, v any) ([]V, bool) {
		a, ok := v.([]any)
		if !ok {
			d.errorf(p, "expected an array, got %s", describe(v))
			return nil, false
		}
		out := make([]V, 0, len(a))
		good := true
		for i, e := range a {
			x, ok := elem(d, p.index(i), e)
			good = good && ok
			out = append(out, x)
		}
		return out, good
	}
}

func globPattern(s string) error {
	if s == "" {
		return errors.New("must not be empty")
	}
	if _, err := path.Match(s, ""); err != nil {
		return fmt.Errorf("%q is not a valid glob: %v", s, err)
	}
	return nil
}

func regexPattern(s string) error {
	if s == "" {
		return errors.New("must not be empty")
	}
	if _, err := regexp.Compile(s); err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return fmt.Errorf("%q is not a valid regular expression: %s in `%s`", s, se.Code, se.Expr)
		}
		return fmt.Errorf("%q is not a valid regular expression: %v", s, err)
	}
	return nil
}

// DeviceModes are the OCCA backends that filter modes may name (matched
// case-insensitively).
var DeviceModes = []string{"Serial", "OpenMP", "CUDA", "HIP", "OpenCL", "Metal", "dpcpp"}

func deviceMode(s string) error {
	for _, m := range DeviceModes {
		if strings.EqualFold(s, m) {
			return nil
		}
	}
	msg := fmt.Sprintf("%q is not a device mode; known: %s", s, strings.Join(DeviceModes, ", "))
	if g := suggest(s, DeviceModes); g != "" {
		msg += " (did you mean " + g + "?)"
	}
	return errors.New(msg)
}

func deviceIndex(d *decoder, p *keyPath, v any) (int64, bool) {
	n, ok := v.(int64)
	if !ok {
		d.errorf(p, "expected an integer, got %s", describe(v))
		return 0, false
	}
	if n < -1 {
		d.errorf(p, "%d is not a device index (must be >= -1; -1 is a device without one)", n)
		return 0, false
	}
	return n, true
}

// eventWords is the events vocabulary: "all", domains, event kinds.
func eventWords() []string {
	w := []string{"all"}
	for _, dom := range trace.Domains() {
		w = append(w, dom.String())
	}
	for _, k := range trace.EventKinds() {
		w = append(w, k.String())
	}
	return w
}

func eventWord(disable bool) func(string) error {
	return func(s string) error {
		if _, ok := trace.ParseDomain(s); !ok && s != "all" {
			k, ok := trace.ParseKind(s)
			if !ok || k.IsDef() || k.Spec() == nil {
				msg := fmt.Sprintf("%q is not a domain, an event kind or \"all\"", s)
				if g := suggest(s, eventWords()); g != "" {
					msg += " (did you mean " + g + "?)"
				}
				return errors.New(msg)
			}
			if disable && k.Spec().Domain == trace.DomainTool {
				return fmt.Errorf("%q cannot be disabled (the tool's own events are always recorded)", s)
			}
		}
		if disable && s == trace.DomainTool.String() {
			return fmt.Errorf("%q cannot be disabled (the tool's own events are always recorded)", s)
		}
		return nil
	}
}

func signal(s string) error {
	_, _, err := ParseSignal(s)
	return err
}

// canonSignal stores the canonical name of a valid signal.
func canonSignal(d *decoder, p *keyPath, v any) (string, bool) {
	s, ok := str(signal)(d, p, v)
	if !ok {
		return "", false
	}
	_, canon, _ := ParseSignal(s)
	return canon, true
}

func name(s string) error { return ValidateName(s) }

// ---- the schema

var (
	levelNames  = []string{"trace", "debug", "info", "warn", "error", "disabled"}
	levelValues = []Level{LevelTrace, LevelDebug, LevelInfo, LevelWarn, LevelError, LevelDisabled}
)

func level(d *decoder, p *keyPath, v any) (Level, bool) {
	s, ok := v.(string)
	if !ok {
		d.errorf(p, "expected a string, got %s", describe(v))
		return 0, false
	}
	l, err := ParseLevel(s)
	if err != nil {
		d.errorf(p, "%s", err)
		return 0, false
	}
	return l, true
}

func cfgLeaf[V any](name string, c conv[V], ptr func(*Config) *V) *field { return leaf(name, c, ptr) }

var rootTable = &table{fields: []*field{
	cfgLeaf("on_error", enum(onErrorNames[:], []OnError{OnErrorContinue, OnErrorAbort}), func(c *Config) *OnError { return &c.OnError }),
	sub("output",
		cfgLeaf("directory", str(nonEmpty), func(c *Config) *string { return &c.Output.Directory }),
		cfgLeaf("name", str(name), func(c *Config) *string { return &c.Output.Name }),
		cfgLeaf("flush_interval", duration(10*time.Millisecond, 60*time.Second), func(c *Config) *time.Duration { return &c.Output.FlushInterval }),
		cfgLeaf("flush_timeout", duration(10*time.Millisecond, 600*time.Second), func(c *Config) *time.Duration { return &c.Output.FlushTimeout }),
		cfgLeaf("memory", size(1<<20, 16<<30), func(c *Config) *uint64 { return &c.Output.Memory }),
		cfgLeaf("buffer_size", size(64<<10, 64<<20), func(c *Config) *uint64 { return &c.Output.BufferSize }),
		cfgLeaf("compression", enum(compressionNames[:], []Compression{0, CompressionFastest, CompressionDefault, CompressionBetter, CompressionBest}), func(c *Config) *Compression { return &c.Output.Compression }),
		cfgLeaf("on_full", enum(onFullNames[:], []OnFull{OnFullDrop, OnFullWait}), func(c *Config) *OnFull { return &c.Output.OnFull }),
	),
	sub("clock",
		cfgLeaf("source", enum(clockNames[:], []ClockSource{ClockAuto, ClockTSC, ClockMonotonic}), func(c *Config) *ClockSource { return &c.Clock.Source }),
	),
	sub("log",
		cfgLeaf("level", level, func(c *Config) *Level { return &c.Log.Level }),
	),
	sub("events",
		cfgLeaf("enable", list(str(eventWord(false))), func(c *Config) *[]string { return &c.Events.Enable }),
		cfgLeaf("disable", list(str(eventWord(true))), func(c *Config) *[]string { return &c.Events.Disable }),
		cfgLeaf("device_time", boolean, func(c *Config) *bool { return &c.Events.DeviceTime }),
	),
	sub("openmp",
		cfgLeaf("scope", enum(openMPScopeNames[:], []OpenMPScope{OpenMPKernels, OpenMPAll}), func(c *Config) *OpenMPScope { return &c.OpenMP.Scope }),
	),
	sub("filter",
		sub("device",
			cfgLeaf("modes", list(str(deviceMode)), func(c *Config) *[]string { return &c.Filter.Device.Modes }),
			cfgLeaf("indices", list(deviceIndex), func(c *Config) *[]int64 { return &c.Filter.Device.Indices }),
		),
		sub("kernel",
			cfgLeaf("names", list(str(globPattern)), func(c *Config) *[]string { return &c.Filter.Kernel.Names }),
			cfgLeaf("regex", list(str(regexPattern)), func(c *Config) *[]string { return &c.Filter.Kernel.Regex }),
			cfgLeaf("tags", list(str(nonEmpty)), func(c *Config) *[]string { return &c.Filter.Kernel.Tags }),
			cfgLeaf("exclude_names", list(str(globPattern)), func(c *Config) *[]string { return &c.Filter.Kernel.ExcludeNames }),
			cfgLeaf("exclude_regex", list(str(regexPattern)), func(c *Config) *[]string { return &c.Filter.Kernel.ExcludeRegex }),
			cfgLeaf("exclude_tags", list(str(nonEmpty)), func(c *Config) *[]string { return &c.Filter.Kernel.ExcludeTags }),
		),
		sub("memory",
			cfgLeaf("tags", list(str(nonEmpty)), func(c *Config) *[]string { return &c.Filter.Memory.Tags }),
			cfgLeaf("min_bytes", size(0, math.MaxUint64), func(c *Config) *uint64 { return &c.Filter.Memory.MinBytes }),
			cfgLeaf("max_bytes", size(0, math.MaxUint64), func(c *Config) *uint64 { return &c.Filter.Memory.MaxBytes }),
			cfgLeaf("modes", list(str(deviceMode)), func(c *Config) *[]string { return &c.Filter.Memory.Modes }),
			cfgLeaf("indices", list(deviceIndex), func(c *Config) *[]int64 { return &c.Filter.Memory.Indices }),
		),
	),
	{name: "tag", elems: &elems{
		table: &table{fields: []*field{
			leaf("kernel", str(globPattern), func(r *TagRule) *string { return &r.Kernel }),
			leaf("kernel_regex", str(regexPattern), func(r *TagRule) *string { return &r.KernelRegex }),
			leaf("tag", str(nonEmpty), func(r *TagRule) *string { return &r.Tag }),
		}},
		make:  func() any { return &TagRule{} },
		check: checkTagRule,
		store: func(dst any, es []any) {
			c := dst.(*Config)
			c.Tags = []TagRule{}
			for _, e := range es {
				c.Tags = append(c.Tags, *e.(*TagRule))
			}
		},
	}},
	sub("trigger",
		cfgLeaf("start_paused", boolean, func(c *Config) *bool { return &c.Trigger.StartPaused }),
		cfgLeaf("toggle_signal", canonSignal, func(c *Config) *string { return &c.Trigger.ToggleSignal }),
		cfgLeaf("max_events", count(0), func(c *Config) *uint64 { return &c.Trigger.MaxEvents }),
		cfgLeaf("max_bytes", size(0, math.MaxUint64), func(c *Config) *uint64 { return &c.Trigger.MaxBytes }),
		&field{name: "window", elems: &elems{
			table: &table{fields: []*field{
				leaf("kernel", str(globPattern), func(w *WindowConfig) *string { return &w.Kernel }),
				leaf("kernel_regex", str(regexPattern), func(w *WindowConfig) *string { return &w.KernelRegex }),
				leaf("kernel_tag", str(nonEmpty), func(w *WindowConfig) *string { return &w.KernelTag }),
				leaf("region", str(globPattern), func(w *WindowConfig) *string { return &w.Region }),
				leaf("from", count(1), func(w *WindowConfig) *uint64 { return &w.From }),
				leaf("to", count(0), func(w *WindowConfig) *uint64 { return &w.To }),
				leaf("delay", duration(0, math.MaxInt64), func(w *WindowConfig) *time.Duration { return &w.Delay }),
				leaf("duration", duration(time.Nanosecond, math.MaxInt64), func(w *WindowConfig) *time.Duration { return &w.Duration }),
			}},
			make:  func() any { return &WindowConfig{From: 1} },
			check: checkWindow,
			store: func(dst any, es []any) {
				c := dst.(*Config)
				c.Trigger.Windows = []WindowConfig{}
				for _, e := range es {
					c.Trigger.Windows = append(c.Trigger.Windows, *e.(*WindowConfig))
				}
			},
		}},
	),
}}

func checkTagRule(d *decoder, p *keyPath, e any, keys map[string]any) bool {
	r := e.(*TagRule)
	r.Line = d.line(p)
	_, k := keys["kernel"]
	_, kr := keys["kernel_regex"]
	_, t := keys["tag"]
	ok := true
	if k == kr {
		d.errorf(p, "give exactly one of kernel or kernel_regex")
		ok = false
	}
	if !t {
		d.errorf(p, "missing key tag (the tag to give)")
		ok = false
	}
	return ok
}

var windowForms = []string{"kernel", "kernel_regex", "kernel_tag", "region"}

func checkWindow(d *decoder, p *keyPath, e any, keys map[string]any) bool {
	w := e.(*WindowConfig)
	w.Line = d.line(p)
	var forms []string
	for _, f := range windowForms {
		if _, ok := keys[f]; ok {
			forms = append(forms, f)
		}
	}
	_, delay := keys["delay"]
	_, dur := keys["duration"]
	switch {
	case delay && dur:
		forms = append(forms, "delay/duration")
	case delay:
		forms = append(forms, "delay")
	case dur:
		forms = append(forms, "duration")
	}
	switch {
	case len(forms) == 0:
		d.errorf(p, "needs one of kernel, kernel_regex, kernel_tag, region, delay or duration")
		return false
	case len(forms) > 1:
		d.errorf(p, "give only one of kernel, kernel_regex, kernel_tag, region or delay/duration (found %s)",
			strings.Join(forms[:len(forms)-1], ", ")+" and "+forms[len(forms)-1])
		return false
	}
	_, from := keys["from"]
	_, to := keys["to"]
	if delay || dur {
		ok := true
		if from {
			d.errorf(p.child("from"), "only launch and region windows take from and to")
			ok = false
		}
		if to {
			d.errorf(p.child("to"), "only launch and region windows take from and to")
			ok = false
		}
		return ok
	}
	if to && w.To != 0 && w.To < w.From {
		d.errorf(p.child("to"), "%d is before from = %d (to = 0 means no end)", w.To, w.From)
		return false
	}
	return true
}

// check applies the rules that involve several keys.
func (d *decoder) check(c *Config) {
	o := &c.Output
	if o.Memory/o.BufferSize < 4 {
		key := "buffer_size"
		if _, ok := d.set["output.buffer_size"]; !ok {
			key = "memory"
		}
		d.errorf((*keyPath)(nil).child("output").child(key), "output.memory (%s) holds only %d buffers of output.buffer_size (%s); need at least 4",
			FormatSize(o.Memory), o.Memory/o.BufferSize, FormatSize(o.BufferSize))
		def := Default().Output
		o.Memory, o.BufferSize = def.Memory, def.BufferSize
	}
	m := &c.Filter.Memory
	if m.MaxBytes != 0 && m.MaxBytes < m.MinBytes {
		d.errorf((*keyPath)(nil).child("filter").child("memory").child("max_bytes"), "%s is below min_bytes (%s); 0 means no maximum",
			FormatSize(m.MaxBytes), FormatSize(m.MinBytes))
		m.MinBytes, m.MaxBytes = 0, 0
	}
	if n := len(c.Trigger.Windows); n > MaxWindows {
		p := (*keyPath)(nil).child("trigger").child("window")
		d.errs = append(d.errs, &Error{File: d.file, Line: c.Trigger.Windows[MaxWindows].Line, Key: p.String(),
			Msg: fmt.Sprintf("%s: %d windows; at most %d are allowed", p, n, MaxWindows)})
		c.Trigger.Windows = c.Trigger.Windows[:MaxWindows]
	}
}
