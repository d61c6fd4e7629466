package config

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is one problem in a config file.
type Error struct {
	File string // the name given to Parse, or the path given to Load
	Line int    // 1-based; 0 when the problem has no line (an unreadable file)
	Key  string // the key concerned ("output.compression", "trigger.window[1].to"), "" for syntax errors
	Msg  string // what is wrong and what is allowed; starts with the key when there is one
}

// Error is the problem on one printable line of at most 1 KiB: the file
// name and a message quoting the text may hold anything.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return Printable(b.String(), 1024)
}

// Printable returns s fit to print on one line of a terminal: characters
// that are not printable (newlines, escape sequences, bidirectional
// controls) and bytes that are not UTF-8 are written as Go escapes (\n,
// \x1b, \u202e, \xff), and past max bytes it is cut, ending in "...".
func Printable(s string, max int) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		var piece string
		switch {
		case r == utf8.RuneError && n == 1:
			piece = `\x` + strconv.FormatUint(uint64(s[i])>>4, 16) + strconv.FormatUint(uint64(s[i])&15, 16)
		case !strconv.IsPrint(r):
			q := strconv.QuoteRune(r)
			piece = q[1 : len(q)-1]
		default:
			piece = s[i : i+n]
		}
		if b.Len()+len(piece) > max {
			b.WriteString("...")
			break
		}
		b.WriteString(piece)
		i += n
	}
	return b.String()
}

// Errors is every problem found in one config, sorted by line. Parse and
// Load return it as their error (never an empty one).
type Errors []*Error

// Error writes one problem per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

func (es Errors) sort() {
	sort.SliceStable(es, func(i, j int) bool { return es[i].Line < es[j].Line })
}

// suggest returns the candidate closest to word when it is close enough to be
// a likely typo (a case difference, or at most two edits, fewer than half
// the word's length), else "".
func suggest(word string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if strings.EqualFold(word, c) && word != c {
			return c
		}
		d := editDistance(strings.ToLower(word), strings.ToLower(c))
		if d > 0 && d < bestD && 2*d < len(word) {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and transpositions of adjacent bytes.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		if a == b {
			return 0
		}
		return 64
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
