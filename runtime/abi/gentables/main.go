// Command gentables writes the C copies of formats/trace/kinds.go and
// runtime/abi: OCCA_TOOLS_ABI_VERSION and the domain and event kind enums
// in the public header runtime/include/occa_tools.h; the record's largest
// argument count, the definition kinds, the values of DROPPED's and
// TRIGGER's arguments, the number of drop counters and the kinds of each
// domain in the runtime's private runtime/src/ot_internal.h. Each table lies
// between BEGIN GENERATED and END GENERATED marker lines; the rest of both
// headers is written by hand.
//
//	go run ./runtime/abi/gentables [ROOT]    (make generate)
//
// rewrites the blocks of the headers under ROOT (default "."). The headers
// are committed, so nothing needs Go to build the runtime or to compile
// against the header; TestGenerated fails when a block is stale.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/runtime/abi"
)

// Regenerate is the command that rewrites the blocks, for messages.
const Regenerate = "make generate (or: go run ./runtime/abi/gentables)"

// A target is a file and the blocks generated in it, by name.
type target struct {
	path   string
	blocks map[string]func(*tables, *bytes.Buffer)
}

var targets = []target{
	{"runtime/include/occa_tools.h", map[string]func(*tables, *bytes.Buffer){
		"abi-version": writeABIVersion,
		"kinds":       writePublicKinds,
	}},
	{"runtime/src/ot_internal.h", map[string]func(*tables, *bytes.Buffer){
		"tables": writeInternalTables,
	}},
}

// domainDoc describes each domain in the header's enum. A new domain needs
// a line here (gentables refuses to run without one).
var domainDoc = map[string]string{
	"device": "device setup",
	"memory": "allocations and frees",
	"copy":   "memory copies",
	"build":  "kernel builds (JIT)",
	"kernel": "kernel launches and device times",
	"stream": "stream create, set",
	"sync":   "stream and device finish",
	"user":   "user regions and markers",
	"tool":   "the tool's own events: drops, triggers, fork",
	"openmp": "OpenMP regions, tasks and syncs (the OMPT tool)",
	"mpi":    "MPI calls, requests, communicators and clock offsets (the PMPI library, runtime/mpi)",
}

// A value is one named number of a C table.
type value struct {
	name string // the trace's name: "copy_begin", "buffer_full"
	num  uint64
}

// tables is what the blocks are made of, read from formats/trace.
type tables struct {
	domains  []trace.Domain
	kinds    []trace.Kind // timed events, in numeric order
	defs     []trace.Kind
	drops    []value
	actions  []value
	causes   []value
	mpiFuncs []value
	counters int // trace.NumReasonCounters
}

// maskBits is the width of the runtime's enabled masks (one bit per kind).
const maskBits = 64

func load() (*tables, error) {
	t := &tables{domains: trace.Domains(), kinds: trace.EventKinds(), counters: trace.NumReasonCounters}
	for _, d := range t.domains {
		if err := checkName("domain", d.String()); err != nil {
			return nil, err
		}
		if domainDoc[d.String()] == "" {
			return nil, fmt.Errorf("domain %q has no description: add one to domainDoc in runtime/abi/gentables/main.go", d)
		}
	}
	for _, k := range t.kinds {
		if err := checkName("event kind", k.String()); err != nil {
			return nil, err
		}
		if k >= maskBits {
			return nil, fmt.Errorf("event kind %s is %d: the runtime's enabled masks hold kinds below %d", k, k, maskBits)
		}
	}
	for k := trace.DefString; k.IsDef(); k++ {
		if err := checkName("definition kind", k.String()); err != nil {
			return nil, err
		}
		t.defs = append(t.defs, k)
	}
	t.drops = values(func(n uint64) string {
		if s := trace.DropReasonName(n); s != "unknown" {
			return s
		}
		return ""
	})
	for _, v := range t.drops {
		if v.num >= uint64(t.counters) {
			return nil, fmt.Errorf("drop reason %s is %d: the stats chunk counts reasons below trace.NumReasonCounters = %d", v.name, v.num, t.counters)
		}
	}
	t.actions = values(trace.TriggerActionName)
	t.causes = values(trace.TriggerCauseName)
	t.mpiFuncs = values(trace.MpiFunctionName)
	for _, vs := range [][]value{t.drops, t.actions, t.causes, t.mpiFuncs} {
		for _, v := range vs {
			if err := checkName("argument value", v.name); err != nil {
				return nil, err
			}
		}
	}
	return t, nil
}

// values lists the named numbers 1, 2, ... up to the first without a name.
func values(name func(uint64) string) []value {
	var vs []value
	for n := uint64(1); name(n) != ""; n++ {
		vs = append(vs, value{name(n), n})
	}
	return vs
}

// checkName refuses a name that does not make a C identifier when upper-cased.
func checkName(what, name string) error {
	for i, c := range name {
		if !(c >= 'a' && c <= 'z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			return fmt.Errorf("%s %q: names are lower case letters, digits and _ (they become C identifiers)", what, name)
		}
	}
	if name == "" {
		return fmt.Errorf("%s with an empty name", what)
	}
	return nil
}

// cName is the C identifier of a trace name: prefix + upper case.
func cName(prefix, name string) string { return prefix + strings.ToUpper(name) }

func writeABIVersion(_ *tables, b *bytes.Buffer) {
	fmt.Fprintf(b, "#define OCCA_TOOLS_ABI_VERSION %du\n", abi.Version)
}

func writePublicKinds(t *tables, b *bytes.Buffer) {
	b.WriteString("/* Domains group event kinds so a source or the config can switch a whole\n" +
		" * area on or off. */\n")
	b.WriteString("typedef enum occa_tools_domain {\n")
	var rows []row
	for _, d := range t.domains {
		rows = append(rows, row{fmt.Sprintf("%s = %d,", cName("OCCA_TOOLS_DOMAIN_", d.String()), d), domainDoc[d.String()]})
	}
	writeRows(b, append(rows, row{fmt.Sprintf("OCCA_TOOLS_DOMAIN_COUNT = %d", len(t.domains)), ""}))
	b.WriteString("} occa_tools_domain_t;\n\n")

	b.WriteString("/* Every event kind, numbered as in the trace format (formats/trace/FORMAT.md).\n" +
		" * Numbers are stable: new kinds are added at the end. Each comment gives the\n" +
		" * kind's domain and the arguments of its record. */\n")
	b.WriteString("typedef enum occa_tools_event_kind {\n")
	rows = rows[:0]
	for _, k := range t.kinds {
		s := k.Spec()
		doc := s.Domain.String()
		if len(s.Args) > 0 {
			names := make([]string, len(s.Args))
			for i, a := range s.Args {
				names[i] = a.Name
			}
			doc += ": " + strings.Join(names, ", ")
		}
		rows = append(rows, row{fmt.Sprintf("%s = %d,", cName("OCCA_TOOLS_EVENT_", k.String()), k), doc})
	}
	writeRows(b, append(rows, row{fmt.Sprintf("OCCA_TOOLS_EVENT_KIND_COUNT = %d", t.kinds[len(t.kinds)-1]+1), ""}))
	b.WriteString("} occa_tools_event_kind_t;\n")
}

func writeInternalTables(t *tables, b *bytes.Buffer) {
	fmt.Fprintf(b, "/* The most arguments any kind has (trace.MaxArgs). */\n#define OT_MAX_ARGS %du\n\n", trace.MaxArgs)

	b.WriteString("/* Definition kinds (trace.Def*). */\n")
	for _, k := range t.defs {
		fmt.Fprintf(b, "#define %s %du\n", cName("OT_", k.String()), k)
	}

	b.WriteString("\n/* Values of DROPPED's reason and TRIGGER's action and cause: trace.Drop*,\n" +
		" * trace.Trigger* and trace.Cause*, which say what each means. The comments\n" +
		" * give their names in the trace. */\n")
	writeEnum(b, "OT_DROP_", t.drops)
	writeEnum(b, "OT_TRIGGER_", t.actions)
	writeEnum(b, "OT_CAUSE_", t.causes)
	b.WriteString("\n/* Values of the MPI kinds' function argument (trace.MpiFunctionName). */\n")
	writeEnum(b, "OT_MPI_", t.mpiFuncs)
	fmt.Fprintf(b, "\n/* Drop counters, one per reason (index 0 unused): trace.NumReasonCounters. */\n"+
		"#define OT_DROP_COUNTERS %du\n", t.counters)

	// One line per domain, its backslash in one column.
	lines := []string{"#define OT_DOMAIN_KINDS", "  {"}
	for _, d := range t.domains {
		var mask uint64
		var nums []trace.Kind
		for _, k := range t.kinds {
			if k.Spec().Domain == d {
				mask |= 1 << k
				nums = append(nums, k)
			}
		}
		lines = append(lines, fmt.Sprintf("    [%s] = 0x%016xull, /* %s */",
			cName("OCCA_TOOLS_DOMAIN_", d.String()), mask, kindRanges(nums)))
	}
	width := 0
	for _, l := range lines {
		width = max(width, len(l))
	}
	var begins uint64
	b.WriteString("\n/* How each event kind's record is encoded (rt.h: ot_encode, formats/trace/raw.go):\n" +
		" * the initializer of events.c's ot_kind_codec[OCCA_TOOLS_EVENT_KIND_COUNT], one\n" +
		" * {nargs, corr, same, ints, times} per kind: its number of arguments, corr\n" +
		" * included; 1 + the index of its correlation id (0: none); and a bit per\n" +
		" * argument that the S flag covers, that is an int (zig-zag), that is a time.\n" +
		" * Then the kinds that begin a pair, a bit per kind. */\n#define OT_KIND_CODEC { \\\n    {0}, /* invalid */")
	for i, k := range t.kinds {
		if i%4 == 0 {
			b.WriteString(" \\\n   ")
		}
		var corr, same, ints, times int
		for j, a := range k.Spec().Args {
			switch a.Type {
			case trace.ArgCorr:
				corr = j + 1
			case trace.ArgTime:
				times |= 1 << j
			case trace.ArgInt:
				ints |= 1 << j
				same |= 1 << j
			default:
				same |= 1 << j
			}
		}
		fmt.Fprintf(b, " [%d] = {%d, %d, 0x%02x, 0x%02x, 0x%02x},", k, len(k.Spec().Args), corr, same, ints, times)
		if k.Spec().Begin {
			begins |= 1 << k
		}
	}
	fmt.Fprintf(b, " \\\n  }\n#define OT_BEGIN_KINDS 0x%016xull\n", begins)
	fmt.Fprintf(b, "\n/* A raw record's most bytes, and its head's S and C flags (rt.h: ot_encode):\n"+
		" * trace.MaxEventBytes, trace.HeadS and trace.HeadC. */\n"+
		"#define OT_RAW_MAX %du\n#define OT_RAW_S 0x%02xu\n#define OT_RAW_C 0x%02xu\n",
		trace.MaxEventBytes, trace.HeadS, trace.HeadC)
	fmt.Fprintf(b, "\n/* The part of output.memory kept for the writer (ot_pool_init):\n"+
		" * abi.WriterReserve. */\n#define OT_WRITER_RESERVE %dull\n", abi.WriterReserve)

	b.WriteString("\n/* The event kinds of each domain, a bit per kind: the initializer of\n" +
		" * control.c's domain_kinds[OCCA_TOOLS_DOMAIN_COUNT]. */\n")
	for _, l := range lines {
		fmt.Fprintf(b, "%-*s \\\n", width, l)
	}
	b.WriteString("  }\n")
}

func writeEnum(b *bytes.Buffer, prefix string, vs []value) {
	b.WriteString("enum {\n")
	rows := make([]row, len(vs))
	for i, v := range vs {
		rows[i] = row{fmt.Sprintf("%s = %d,", cName(prefix, v.name), v.num), v.name}
	}
	rows[len(rows)-1].code = strings.TrimSuffix(rows[len(rows)-1].code, ",")
	writeRows(b, rows)
	b.WriteString("};\n")
}

// A row is one line of an enum: its code and a comment ("" for none).
type row struct{ code, comment string }

// writeRows writes rows indented, their comments in one column.
func writeRows(b *bytes.Buffer, rows []row) {
	width := 0
	for _, r := range rows {
		if r.comment != "" {
			width = max(width, len(r.code))
		}
	}
	for _, r := range rows {
		if r.comment == "" {
			fmt.Fprintf(b, "  %s\n", r.code)
		} else {
			fmt.Fprintf(b, "  %-*s /* %s */\n", width, r.code, r.comment)
		}
	}
}

// kindRanges writes ascending kinds as "kinds 1-2, 5" ("no kinds" when none).
func kindRanges(ks []trace.Kind) string {
	if len(ks) == 0 {
		return "no kinds"
	}
	var parts []string
	for i := 0; i < len(ks); {
		j := i
		for j+1 < len(ks) && ks[j+1] == ks[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(uint8(ks[i])))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", ks[i], ks[j]))
		}
		i = j + 1
	}
	return "kinds " + strings.Join(parts, ", ")
}

// Files returns the targets under root with their blocks regenerated, by
// path relative to root.
func Files(root string) (map[string][]byte, error) {
	t, err := load()
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(targets))
	for _, tg := range targets {
		old, err := os.ReadFile(filepath.Join(root, tg.path))
		if err != nil {
			return nil, err
		}
		data, err := splice(tg, old, t)
		if err != nil {
			return nil, err
		}
		out[tg.path] = data
	}
	return out, nil
}

const (
	beginMark = "/* BEGIN GENERATED "
	endMark   = "/* END GENERATED "
)

// splice replaces each block of tg in data, marker lines included, with its
// generated text. Every block must appear once; an unknown block is an error.
func splice(tg target, data []byte, t *tables) ([]byte, error) {
	var out bytes.Buffer
	seen := map[string]bool{}
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i := 0; i < len(lines); i++ {
		line := string(lines[i])
		if !strings.HasPrefix(line, beginMark) {
			if strings.HasPrefix(line, endMark) {
				return nil, fmt.Errorf("%s:%d: END GENERATED without its BEGIN GENERATED line", tg.path, i+1)
			}
			out.WriteString(line)
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(line, beginMark), ":")
		name = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(name), "*/"))
		gen, ok := tg.blocks[name]
		if !ok {
			return nil, fmt.Errorf("%s:%d: unknown generated block %q", tg.path, i+1, name)
		}
		if seen[name] {
			return nil, fmt.Errorf("%s:%d: generated block %q appears twice", tg.path, i+1, name)
		}
		seen[name] = true
		end := i + 1
		for end < len(lines) && !strings.HasPrefix(string(lines[end]), endMark) {
			end++
		}
		if end == len(lines) || strings.TrimSpace(string(lines[end])) != endMark+name+" */" {
			return nil, fmt.Errorf("%s:%d: generated block %q has no line %q after it", tg.path, i+1, name, endMark+name+" */")
		}
		fmt.Fprintf(&out, "%s%s: made by runtime/abi/gentables from formats/trace/kinds.go and\n"+
			" * runtime/abi/abi.go; do not edit, change those and run `make generate`. */\n", beginMark, name)
		gen(t, &out)
		fmt.Fprintf(&out, "%s%s */\n", endMark, name)
		i = end
	}
	for name := range tg.blocks {
		if !seen[name] {
			return nil, fmt.Errorf("%s: no generated block %q (a line starting %q)", tg.path, name, beginMark+name+":")
		}
	}
	return out.Bytes(), nil
}

// Write regenerates the blocks of the targets under root and returns the
// paths it changed.
func Write(root string) ([]string, error) {
	files, err := Files(root)
	if err != nil {
		return nil, err
	}
	var changed []string
	for _, tg := range targets {
		p := filepath.Join(root, tg.path)
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, files[tg.path]) {
			continue
		}
		if err := os.WriteFile(p, files[tg.path], 0o644); err != nil {
			return changed, err
		}
		changed = append(changed, p)
	}
	return changed, nil
}

// Check returns an error naming every target under root whose blocks are
// not what Write would write, and the command that rewrites them.
func Check(root string) error {
	files, err := Files(root)
	if err != nil {
		return err
	}
	var msgs []string
	for _, tg := range targets {
		old, err := os.ReadFile(filepath.Join(root, tg.path))
		if err != nil {
			return err
		}
		if line := firstDiff(old, files[tg.path]); line > 0 {
			msgs = append(msgs, fmt.Sprintf("%s:%d: stale generated block (formats/trace/kinds.go or runtime/abi/abi.go changed, or the block was edited by hand): run %s",
				tg.path, line, Regenerate))
		}
	}
	if len(msgs) > 0 {
		return errors.New(strings.Join(msgs, "\n"))
	}
	return nil
}

// firstDiff returns the first line where a and b differ, 0 when they are equal.
func firstDiff(a, b []byte) int {
	if bytes.Equal(a, b) {
		return 0
	}
	la, lb := bytes.SplitAfter(a, []byte("\n")), bytes.SplitAfter(b, []byte("\n"))
	for i := range min(len(la), len(lb)) {
		if !bytes.Equal(la[i], lb[i]) {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}

func main() {
	root := "."
	switch len(os.Args) {
	case 1:
	case 2:
		root = os.Args[1]
	default:
		fmt.Fprintln(os.Stderr, "usage: gentables [ROOT]")
		os.Exit(2)
	}
	changed, err := Write(root)
	for _, p := range changed {
		fmt.Println("gentables: wrote", p)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gentables:", err)
		os.Exit(1)
	}
}
