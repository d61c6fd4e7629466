package trace

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// KindDesc is one entry of a trace file's kind table (FORMAT.md §4): how the
// writer that made the file encoded a kind. The reader decodes every event
// and def with the file's table, so it reads kinds and arguments that a
// newer writer added.
type KindDesc struct {
	Kind Kind
	Name string
	// Begin marks the enter half of a pair: its C flag means prev+1
	// (FORMAT.md §5).
	Begin bool
	// Text marks a definition whose arguments are followed by a text, as
	// DefString's are.
	Text bool
	Args []Arg
}

// ArgIndex returns the position of the argument called name, or -1.
func (d *KindDesc) ArgIndex(name string) int {
	for i, a := range d.Args {
		if a.Name == name {
			return i
		}
	}
	return -1
}

// KindTable returns the kind table this package writes into every file: each
// timed and definition kind of kinds.go, in numeric order.
func KindTable() []KindDesc {
	t := make([]KindDesc, len(compiledDescs))
	for i, d := range compiledDescs {
		d.Args = append([]Arg(nil), d.Args...)
		t[i] = d
	}
	return t
}

// Limits of a kind table (FORMAT.md §4).
const (
	maxTableArgs = 16 // arguments per kind
	maxNameLen   = 64 // bytes in a kind or argument name
	maxArgType   = 127
	maxEventKind = kindMask // timed kinds are 1..63: six bits of the event head

	descBegin = 1 << 0 // entry flags (FORMAT.md §4)
	descText  = 1 << 1
)

// compiledDescs is kinds.go as a kind table.
var compiledDescs = func() []KindDesc {
	var t []KindDesc
	for k := range specs {
		s := Kind(k).Spec()
		if s == nil {
			continue
		}
		t = append(t, KindDesc{Kind: Kind(k), Name: s.Name, Begin: s.Begin, Text: Kind(k) == DefString, Args: s.Args})
	}
	return t
}()

// appendKindTable encodes descs as the value of the kinds header field
// (FORMAT.md §4). It does not check them.
func appendKindTable(b []byte, descs []KindDesc) []byte {
	b = appendUvarint(b, uint64(len(descs)))
	for i := range descs {
		d := &descs[i]
		var flags uint64
		if d.Begin {
			flags |= descBegin
		}
		if d.Text {
			flags |= descText
		}
		b = appendUvarint(b, uint64(d.Kind))
		b = appendUvarint(b, flags)
		b = appendUvarint(b, uint64(len(d.Name)))
		b = append(b, d.Name...)
		b = appendUvarint(b, uint64(len(d.Args)))
		for _, a := range d.Args {
			b = appendUvarint(b, uint64(a.Type))
			if a.Name == a.Type.String() {
				b = append(b, 0) // named after its type (FORMAT.md §4)
				continue
			}
			b = appendUvarint(b, uint64(len(a.Name)))
			b = append(b, a.Name...)
		}
	}
	return b
}

// parseKindTable decodes and checks the value of the kinds header field
// (FORMAT.md §4). It is untrusted input: every count and length is checked
// against what is left before anything is allocated.
func parseKindTable(v []byte) ([]KindDesc, error) {
	n, i, ok := uvarint(v, 0)
	if !ok {
		return nil, errors.New("bad entry count varint")
	}
	if n > 255 {
		return nil, fmt.Errorf("%d entries, over the 255 kinds there are", n)
	}
	if n > uint64(len(v)-i)/5 { // an entry takes at least 5 bytes
		return nil, fmt.Errorf("declares %d entries but has room for at most %d", n, (len(v)-i)/5)
	}
	// At most 255 entries of at most maxTableArgs arguments: the
	// allocations stay small whatever the field claims.
	descs := make([]KindDesc, 0, n)
	// str reads a name; what (called on an error only: a header is read
	// per trace, 10,000 times for a big run) says which.
	str := func(what func() string) (string, error) {
		l, j, ok := uvarint(v, i)
		if !ok || l > uint64(len(v)-j) {
			return "", fmt.Errorf("%s: length runs past the field", what())
		}
		i = j + int(l)
		return string(v[j:i]), nil
	}
	var prev Kind
	for e := uint64(0); e < n; e++ {
		var k, flags, nargs uint64
		if k, i, ok = uvarint(v, i); !ok {
			return nil, fmt.Errorf("entry %d: bad kind varint", e)
		}
		if k == 0 || k > 255 || (e > 0 && k <= uint64(prev)) {
			return nil, fmt.Errorf("entry %d: kind %d is out of order or out of range (kinds are 1..255, in increasing order)", e, k)
		}
		if flags, i, ok = uvarint(v, i); !ok {
			return nil, fmt.Errorf("kind %d: bad flags varint", k)
		}
		if flags&^(descBegin|descText) != 0 {
			return nil, fmt.Errorf("kind %d: unknown flags %#x (a later format whose encoding this reader cannot follow)", k, flags)
		}
		d := KindDesc{Kind: Kind(k), Begin: flags&descBegin != 0, Text: flags&descText != 0}
		var err error
		if d.Name, err = str(func() string { return fmt.Sprintf("kind %d: name", k) }); err != nil {
			return nil, err
		}
		if nargs, i, ok = uvarint(v, i); !ok {
			return nil, fmt.Errorf("kind %d: bad argument count varint", k)
		}
		if nargs > maxTableArgs {
			return nil, fmt.Errorf("kind %d: %d arguments, over the %d limit", k, nargs, maxTableArgs)
		}
		if nargs > 0 {
			d.Args = make([]Arg, nargs)
		}
		for j := range d.Args {
			var typ uint64
			if typ, i, ok = uvarint(v, i); !ok {
				return nil, fmt.Errorf("kind %d: argument %d: bad type varint", k, j)
			}
			if typ > maxArgType {
				return nil, fmt.Errorf("kind %d: argument %d: type %d is out of range 1..%d", k, j, typ, maxArgType)
			}
			d.Args[j].Type = ArgType(typ)
			if d.Args[j].Name, err = str(func() string { return fmt.Sprintf("kind %d: argument %d: name", k, j) }); err != nil {
				return nil, err
			}
			if d.Args[j].Name == "" {
				d.Args[j].Name = d.Args[j].Type.String() // type(N) fails checkName below
			}
		}
		if err := checkDesc(&d); err != nil {
			return nil, err
		}
		descs = append(descs, d)
		prev = Kind(k)
	}
	if i != len(v) {
		return nil, fmt.Errorf("%d unexpected bytes after the last entry", len(v)-i)
	}
	return descs, nil
}

// checkDesc checks one entry's own consistency (FORMAT.md §4).
func checkDesc(d *KindDesc) error {
	what := func() string { return fmt.Sprintf("kind %d (%s)", d.Kind, d.Name) }
	if err := checkName(d.Name); err != nil {
		return fmt.Errorf("kind %d: name: %v", d.Kind, err)
	}
	if d.Kind == 0 {
		return fmt.Errorf("%s: kind 0 is not a kind", what())
	}
	timed := d.Kind <= maxEventKind
	if d.Begin && !timed {
		return fmt.Errorf("%s: the begin flag is set on a definition kind", what())
	}
	if d.Text && timed {
		return fmt.Errorf("%s: the text flag is set on a timed kind", what())
	}
	if len(d.Args) > maxTableArgs {
		return fmt.Errorf("%s: %d arguments, over the %d limit", what(), len(d.Args), maxTableArgs)
	}
	corr := 0
	for j, a := range d.Args {
		if a.Type == 0 || a.Type > maxArgType {
			return fmt.Errorf("%s: argument %d: type %d is out of range 1..%d", what(), j, a.Type, maxArgType)
		}
		if err := checkName(a.Name); err != nil {
			return fmt.Errorf("%s: argument %d: name: %v", what(), j, err)
		}
		if a.Type == ArgCorr {
			corr++
		}
	}
	if corr > 1 {
		return fmt.Errorf("%s: %d correlation id arguments; a kind has at most one", what(), corr)
	}
	return nil
}

// checkName accepts 1..64 bytes of [a-z0-9_], starting with a letter: names
// go into dumps unquoted.
func checkName(s string) error {
	if s == "" || len(s) > maxNameLen {
		return fmt.Errorf("length %d is out of range 1..%d", len(s), maxNameLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || i > 0 && (c >= '0' && c <= '9' || c == '_')) {
			return fmt.Errorf("%q: names are [a-z][a-z0-9_]*", s)
		}
	}
	return nil
}

// readKinds is a kind table as a reader uses it: parsed, checked against
// this reader's (compat, checkCompatible's verdict) and flattened (tab,
// when compat is nil).
type readKinds struct {
	raw    string // the encoded field
	descs  []KindDesc
	compat error
	tab    *kindTab
}

// recentKinds keeps the last few kind tables read, by their bytes: the
// traces of one run carry the same table, and parsing, checking and
// flattening it took half of opening a trace of a few thousand events,
// which a summary of 10,000 ranks does 20,000 times. Its entries are
// shared and never changed (Header.Kinds is read-only).
var recentKinds struct {
	sync.Mutex
	k    [4]*readKinds
	next int
}

// parseKinds returns the kind table encoded in v, parsed as parseKindTable
// does, from recentKinds when it holds it.
func parseKinds(v []byte) (*readKinds, error) {
	recentKinds.Lock()
	for _, k := range recentKinds.k {
		if k != nil && k.raw == string(v) {
			recentKinds.Unlock()
			return k, nil
		}
	}
	recentKinds.Unlock()
	descs, err := parseKindTable(v)
	if err != nil {
		return nil, err
	}
	k := checkKinds(descs)
	k.raw = string(v)
	recentKinds.Lock()
	recentKinds.k[recentKinds.next] = k
	recentKinds.next = (recentKinds.next + 1) % len(recentKinds.k)
	recentKinds.Unlock()
	return k, nil
}

// kindsOf returns descs checked and flattened: from recentKinds when descs
// is one of its tables (the header was parsed from a file), else worked
// out now (a Header made in memory).
func kindsOf(descs []KindDesc) *readKinds {
	recentKinds.Lock()
	for _, k := range recentKinds.k {
		if k != nil && len(k.descs) == len(descs) && (len(descs) == 0 || &k.descs[0] == &descs[0]) {
			recentKinds.Unlock()
			return k
		}
	}
	recentKinds.Unlock()
	return checkKinds(descs)
}

// checkKinds checks descs against this reader's table and flattens them.
func checkKinds(descs []KindDesc) *readKinds {
	k := &readKinds{descs: descs, compat: checkCompatible(descs)}
	if k.compat == nil {
		k.tab = buildTab(descs)
	}
	return k
}

// checkCompatible checks a file's table against kinds.go (FORMAT.md §4): a
// kind this package knows must keep its name and flags, and may only have
// gained arguments at the end.
func checkCompatible(descs []KindDesc) error {
	for i := range descs {
		d := &descs[i]
		s := d.Kind.Spec()
		if s == nil {
			continue // a kind added later: decoded with the file's table, skipped by consumers
		}
		fail := func(format string, args ...any) error {
			return fmt.Errorf("kind %d (%s): %s", d.Kind, s.Name, fmt.Sprintf(format, args...))
		}
		if d.Name != s.Name {
			return fail("the file's kind table calls it %q", d.Name)
		}
		if d.Begin != s.Begin {
			return fail("the file's kind table sets its begin flag to %v, this reader has %v", d.Begin, s.Begin)
		}
		if text := d.Kind == DefString; d.Text != text {
			return fail("the file's kind table sets its text flag to %v, this reader has %v", d.Text, text)
		}
		if len(d.Args) < len(s.Args) {
			return fail("the file's kind table gives it %d arguments, this reader needs %d", len(d.Args), len(s.Args))
		}
		for j, a := range s.Args {
			if d.Args[j].Type != a.Type {
				return fail("argument %d (%s) is of type %v in the file's kind table, %v in this reader", j, a.Name, d.Args[j].Type, a.Type)
			}
		}
	}
	return nil
}

// kindInfo is a kind table entry flattened for the encoder and decoder loops.
type kindInfo struct {
	valid bool
	begin bool   // enter half of a pair: its C flag means prev+1 (FORMAT.md §5)
	text  bool   // a text follows the arguments (defs)
	n     int8   // number of arguments
	keep  int8   // arguments kept in Event.Args and Def.Args: min(n, MaxArgs)
	corr  int8   // index of the ArgCorr argument, -1 when none
	flatN int8   // n for a timed kind AddFlat encodes (n <= MaxArgs), else -1
	refs  uint16 // bit j: argument j is covered by the S flag; 0: the kind takes no S flag
	times uint16 // bit j: argument j is an ArgTime
	types [maxTableArgs]ArgType
	// AddRaw copies a record of the kind when rawCopy for its head's
	// flags (head >> 6) is not rawNo (a timed kind without ArgTime, S set
	// exactly when the kind has arguments it covers, C only with a
	// correlation id) and the batch follows, in step with the buffer, what
	// rawNeed names (Batch.synced): the kind's previous arguments if the S
	// flag covers any, and the correlation id (bit 0) if it has one.
	rawCopy [4]uint8
	rawNeed uint64
}

// kindInfo.rawCopy: how AddRaw copies a record, by what its correlation
// id needs.
const (
	rawNo       = iota // not copied
	rawNoCorr          // the kind has none
	rawCorrSame        // C: the previous one
	rawCorrNext        // C on a begin kind: the previous one + 1
	rawCorrVar         // a varint of the difference follows the delta
)

// kindTab is one kindInfo per kind number.
type kindTab [256]kindInfo

// buildTab flattens descs, which checkDesc has accepted.
func buildTab(descs []KindDesc) *kindTab {
	t := new(kindTab)
	for k := range t {
		t[k].flatN = -1
	}
	for i := range descs {
		d := &descs[i]
		ki := &t[d.Kind]
		*ki = kindInfo{valid: true, begin: d.Begin, text: d.Text, n: int8(len(d.Args)), keep: int8(min(len(d.Args), MaxArgs)), corr: -1, flatN: -1}
		if d.Kind <= maxEventKind && len(d.Args) <= MaxArgs {
			ki.flatN = int8(len(d.Args))
		}
		for j, a := range d.Args {
			ki.types[j] = a.Type
			switch a.Type {
			case ArgCorr:
				ki.corr = int8(j)
			case ArgTime:
				ki.times |= 1 << j
			default:
				ki.refs |= 1 << j
			}
		}
		if ki.flatN >= 0 && ki.times == 0 {
			for f := range ki.rawCopy {
				s, c := f&1 != 0, f&2 != 0 // head bits 6 (S) and 7 (C)
				switch {
				case s != (ki.refs != 0):
				case ki.corr < 0 && !c:
					ki.rawCopy[f] = rawNoCorr
				case ki.corr < 0:
				case !c:
					ki.rawCopy[f] = rawCorrVar
				case ki.begin:
					ki.rawCopy[f] = rawCorrNext
				default:
					ki.rawCopy[f] = rawCorrSame
				}
			}
			if ki.refs != 0 {
				ki.rawNeed |= 1 << d.Kind
			}
			if ki.corr >= 0 {
				ki.rawNeed |= syncedCorr
			}
		}
	}
	return t
}

// compiledTab is kinds.go flattened: what Writer and NewBatch encode with.
var compiledTab = buildTab(compiledDescs)

// writerTab checks a table a Writer is to write with and flattens it.
func writerTab(descs []KindDesc) (*kindTab, error) {
	for i := range descs {
		d := &descs[i]
		if err := checkDesc(d); err != nil {
			return nil, err
		}
		if i > 0 && d.Kind <= descs[i-1].Kind {
			return nil, fmt.Errorf("kind %d: the table is not in increasing kind order", d.Kind)
		}
		if len(d.Args) > MaxArgs {
			return nil, fmt.Errorf("kind %d (%s): %d arguments, over the writer's %d", d.Kind, d.Name, len(d.Args), MaxArgs)
		}
	}
	return buildTab(descs), nil
}

// KindDesc returns the entry of the file's kind table for k, or nil when
// the table has none (FORMAT.md §4).
func (h *Header) KindDesc(k Kind) *KindDesc {
	if i := int(k) - 1; i >= 0 && i < len(h.Kinds) && h.Kinds[i].Kind == k {
		return &h.Kinds[i] // timed kinds are dense from 1
	}
	for i := range h.Kinds {
		if h.Kinds[i].Kind == k {
			return &h.Kinds[i]
		}
	}
	return nil
}

// sameAsCompiled reports whether d is exactly kinds.go's entry for its kind.
func sameAsCompiled(d *KindDesc) bool {
	s := d.Kind.Spec()
	if s == nil || d.Name != s.Name || d.Begin != s.Begin || d.Text != (d.Kind == DefString) || len(d.Args) != len(s.Args) {
		return false
	}
	for j := range d.Args {
		if d.Args[j] != s.Args[j] {
			return false
		}
	}
	return true
}

// kindLine is the dump's header line for a table entry that differs from
// kinds.go, e.g. "header kind=40 name=omp_parallel_begin flags=begin args=corr:corr,threads:uint".
func kindLine(d *KindDesc) string {
	var b strings.Builder
	b.WriteString("header kind=")
	b.WriteString(itoa(uint64(d.Kind)))
	b.WriteString(" name=")
	b.WriteString(d.Name)
	switch {
	case d.Begin:
		b.WriteString(" flags=begin")
	case d.Text:
		b.WriteString(" flags=text")
	}
	b.WriteString(" args=")
	for j, a := range d.Args {
		if j > 0 {
			b.WriteByte(',')
		}
		b.WriteString(a.Name)
		b.WriteByte(':')
		b.WriteString(a.Type.String())
	}
	return b.String()
}
