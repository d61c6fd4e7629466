package config

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// keyPath names a key in a config as messages show it: components joined by
// dots, quoted where TOML needs quotes, and array elements as [i]
// ("trigger.window[2].from", "filter.kernel.regex[0]"). The decoder and the
// key scanner build paths the same way, so the string is also the lookup key
// for line numbers.
type keyPath struct {
	str   string
	up    *keyPath
	depth int // steps from the top: trigger.window[2].from is 4
}

func (p *keyPath) String() string {
	if p == nil {
		return ""
	}
	return p.str
}

func (p *keyPath) child(name string) *keyPath {
	if p == nil {
		return &keyPath{str: quoteKey(name), depth: 1}
	}
	return &keyPath{str: p.str + "." + quoteKey(name), up: p, depth: p.depth + 1}
}

func (p *keyPath) index(i int) *keyPath {
	return &keyPath{str: p.String() + "[" + strconv.Itoa(i) + "]", up: p, depth: p.Depth() + 1}
}

// Depth is the number of steps of p, 0 for the top.
func (p *keyPath) Depth() int {
	if p == nil {
		return 0
	}
	return p.depth
}

// quoteKey writes one key component as TOML would: bare when it can be.
func quoteKey(k string) string {
	if k == "" {
		return `""`
	}
	for i := 0; i < len(k); i++ {
		if !isBare(k[i]) {
			return strconv.Quote(k)
		}
	}
	return k
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// keyLines finds the line on which each key of a TOML document is defined,
// by path. BurntSushi/toml keeps one position per dotted key name, which
// loses the elements of arrays of tables ([[trigger.window]]); this scanner
// numbers them. Headers and dotted keys also record their parent tables
// (first occurrence); every array element records the line it starts on.
//
// It runs before the TOML parser, on any text, and is the config's guard
// against shapes that would cost that parser time or memory out of all
// proportion to the file's size (a key of 10,000 dotted parts takes it
// seconds, a million nested arrays all the memory there is): it stops at
// the first key path deeper than MaxDepth or longer than MaxKeyPath and
// returns that problem (without File). It never panics, always advances,
// and, as no path it builds is longer than MaxKeyPath, works in time and
// memory linear in the text.
func keyLines(text string) (map[string]int, *Error) {
	k := &keyScanner{s: text, line: 1, lines: map[string]int{}, arrays: map[string]int{}}
	k.document()
	return k.lines, k.over
}

type keyScanner struct {
	s      string
	i      int
	line   int
	lines  map[string]int
	arrays map[string]int // array-of-tables path -> elements seen
	over   *Error         // the limit passed; set, scanning stops
}

// child and index extend p unless the path would pass MaxDepth or
// MaxKeyPath: then they stop the scan (and return p).
func (k *keyScanner) child(p *keyPath, name string) *keyPath {
	if k.over != nil {
		return p
	}
	if len(name) <= MaxKeyPath { // quoting only makes it longer
		if q := p.child(name); !k.tooBig(q) {
			return q
		}
		return p
	}
	k.stop(p, fmt.Sprintf("a key name of %d bytes; key paths may be at most %d bytes", len(name), MaxKeyPath))
	return p
}

func (k *keyScanner) index(p *keyPath, i int) *keyPath {
	if k.over != nil {
		return p
	}
	if q := p.index(i); !k.tooBig(q) {
		return q
	}
	return p
}

func (k *keyScanner) tooBig(q *keyPath) bool {
	switch {
	case q.depth > MaxDepth:
		k.stop(q.up, fmt.Sprintf("nested more than %d levels deep (each table or key name and each array element is a level); remove the extra nesting", MaxDepth))
	case len(q.str) > MaxKeyPath:
		k.stop(q.up, fmt.Sprintf("a key path of %d bytes; key paths may be at most %d bytes", len(q.str), MaxKeyPath))
	default:
		return false
	}
	return true
}

// stop records the problem at p and ends the scan.
func (k *keyScanner) stop(p *keyPath, msg string) {
	if p != nil {
		msg = p.str + ": " + msg
	}
	k.over = &Error{Line: k.line, Key: p.String(), Msg: msg}
	k.i = len(k.s)
}

func (k *keyScanner) eof() bool { return k.i >= len(k.s) }

func (k *keyScanner) peek() byte {
	if k.i < len(k.s) {
		return k.s[k.i]
	}
	return 0
}

// next consumes one byte, counting lines.
func (k *keyScanner) next() {
	if k.i < len(k.s) {
		if k.s[k.i] == '\n' {
			k.line++
		}
		k.i++
	}
}

func (k *keyScanner) set(p *keyPath, line int) { k.lines[p.String()] = line }
func (k *keyScanner) setIfAbsent(p *keyPath, line int) {
	if _, ok := k.lines[p.String()]; !ok {
		k.lines[p.String()] = line
	}
}

// skipBlank skips spaces and tabs.
func (k *keyScanner) skipBlank() {
	for !k.eof() && (k.peek() == ' ' || k.peek() == '\t') {
		k.i++
	}
}

// skipSpace skips whitespace, newlines and comments.
func (k *keyScanner) skipSpace() {
	for !k.eof() {
		switch k.peek() {
		case ' ', '\t', '\r', '\n':
			k.next()
		case '#':
			for !k.eof() && k.peek() != '\n' {
				k.i++
			}
		default:
			return
		}
	}
}

func (k *keyScanner) skipLine() {
	for !k.eof() && k.peek() != '\n' {
		k.i++
	}
}

func (k *keyScanner) document() {
	var table *keyPath
	for {
		k.skipSpace()
		if k.eof() {
			return
		}
		line := k.line
		if k.peek() == '[' {
			array := strings.HasPrefix(k.s[k.i:], "[[")
			k.i++
			if array {
				k.i++
			}
			names := k.key()
			k.skipBlank()
			for n := 0; n < 2 && k.peek() == ']'; n++ {
				k.i++
			}
			table = k.header(names, array, line)
			k.skipLine()
			continue
		}
		start := k.i
		names := k.key()
		if len(names) == 0 {
			if k.i == start {
				k.skipLine()
			}
			continue
		}
		p := k.dotted(table, names, line)
		k.skipBlank()
		if k.peek() == '=' {
			k.i++
		}
		k.value(p)
	}
}

// header resolves a table header: a component that names an array of
// tables refers to its last element, and the last component of an [[array]]
// header starts a new element.
func (k *keyScanner) header(names []string, array bool, line int) *keyPath {
	var p *keyPath
	for j, n := range names {
		p = k.child(p, n)
		last := j == len(names)-1
		switch {
		case last && array:
			c := k.arrays[p.String()]
			k.arrays[p.String()] = c + 1
			k.setIfAbsent(p, line)
			p = k.index(p, c)
			k.set(p, line)
		case k.arrays[p.String()] > 0:
			p = k.index(p, k.arrays[p.String()]-1)
		case last:
			k.set(p, line)
		default:
			k.setIfAbsent(p, line)
		}
	}
	return p
}

func (k *keyScanner) dotted(p *keyPath, names []string, line int) *keyPath {
	for j, n := range names {
		p = k.child(p, n)
		if j == len(names)-1 {
			k.set(p, line)
		} else {
			k.setIfAbsent(p, line)
		}
	}
	return p
}

// key reads a dotted key: bare, "basic" or 'literal' components.
func (k *keyScanner) key() []string {
	var names []string
	for {
		k.skipBlank()
		var name string
		switch c := k.peek(); {
		case c == '"':
			name = k.basicString()
		case c == '\'':
			name = k.literalString()
		default:
			start := k.i
			for !k.eof() && !strings.ContainsRune(" \t\r\n=.[]#,{}\"'", rune(k.peek())) {
				k.i++
			}
			if k.i == start {
				return names
			}
			name = k.s[start:k.i]
		}
		names = append(names, name)
		k.skipBlank()
		if k.peek() != '.' {
			return names
		}
		k.i++
	}
}

func (k *keyScanner) value(p *keyPath) {
	k.skipBlank()
	switch k.peek() {
	case '"':
		if strings.HasPrefix(k.s[k.i:], `"""`) {
			k.multiline(`"""`, true)
		} else {
			k.basicString()
		}
	case '\'':
		if strings.HasPrefix(k.s[k.i:], `'''`) {
			k.multiline(`'''`, false)
		} else {
			k.literalString()
		}
	case '[':
		k.array(p)
	case '{':
		k.inlineTable(p)
	default:
		for !k.eof() && !strings.ContainsRune(",]}\r\n#", rune(k.peek())) {
			k.i++
		}
	}
}

func (k *keyScanner) array(p *keyPath) {
	k.i++ // [
	n := 0
	for {
		k.skipSpace()
		switch k.peek() {
		case 0:
			if k.eof() {
				return
			}
		case ']':
			k.i++
			return
		case ',':
			k.i++
			continue
		}
		e := k.index(p, n)
		k.set(e, k.line)
		start := k.i
		k.value(e)
		n++
		if k.i == start {
			k.next()
		}
	}
}

func (k *keyScanner) inlineTable(p *keyPath) {
	k.i++ // {
	for {
		k.skipSpace()
		switch k.peek() {
		case 0:
			if k.eof() {
				return
			}
		case '}':
			k.i++
			return
		case ',':
			k.i++
			continue
		}
		line, start := k.line, k.i
		names := k.key()
		if len(names) == 0 {
			if k.i == start {
				k.next()
			}
			continue
		}
		kp := k.dotted(p, names, line)
		k.skipBlank()
		if k.peek() == '=' {
			k.i++
		}
		k.value(kp)
	}
}

// basicString reads a "..." string and returns its decoded value.
func (k *keyScanner) basicString() string {
	k.i++ // "
	var b strings.Builder
	for !k.eof() {
		c := k.peek()
		switch c {
		case '"':
			k.i++
			return b.String()
		case '\n':
			return b.String() // not valid TOML; stop at the line's end
		case '\\':
			k.i++
			k.escape(&b)
		default:
			b.WriteByte(c)
			k.i++
		}
	}
	return b.String()
}

func (k *keyScanner) escape(b *strings.Builder) {
	if k.eof() {
		return
	}
	c := k.peek()
	k.i++
	hex := 0
	switch c {
	case 'b':
		b.WriteByte('\b')
	case 't':
		b.WriteByte('\t')
	case 'n':
		b.WriteByte('\n')
	case 'f':
		b.WriteByte('\f')
	case 'r':
		b.WriteByte('\r')
	case 'e':
		b.WriteByte(0x1b)
	case 'x':
		hex = 2
	case 'u':
		hex = 4
	case 'U':
		hex = 8
	case '\n':
		k.line++
	default:
		b.WriteByte(c)
	}
	if hex > 0 && k.i+hex <= len(k.s) {
		v, err := strconv.ParseUint(k.s[k.i:k.i+hex], 16, 32)
		k.i += hex
		if err == nil && utf8.ValidRune(rune(v)) {
			b.WriteRune(rune(v))
		}
	}
}

func (k *keyScanner) literalString() string {
	k.i++ // '
	start := k.i
	for !k.eof() && k.peek() != '\'' && k.peek() != '\n' {
		k.i++
	}
	s := k.s[start:k.i]
	if k.peek() == '\'' {
		k.i++
	}
	return s
}

// multiline skips a """ or ”' string, including up to two quotes that
// belong to its content before the closing delimiter.
func (k *keyScanner) multiline(delim string, escapes bool) {
	k.i += 3
	for !k.eof() {
		if escapes && k.peek() == '\\' {
			k.i++
			k.next()
			continue
		}
		if strings.HasPrefix(k.s[k.i:], delim) {
			k.i += 3
			for n := 0; n < 2 && k.peek() == delim[0]; n++ {
				k.i++
			}
			return
		}
		k.next()
	}
}
