// Package table declares the output tables of convert once: each is a list
// of columns (name, type, unit, meaning, and the record field that holds
// the value). The CSV header and lines, the Parquet tags the record's
// fields must carry (Check), and the column lists of
// formats/parquet/SCHEMA.md (Markdown) all derive from that list. The CSV
// line encoder of a large table is generated from it too (GoCSV), since a
// loop over the columns costs about twice the straight-line code per row.
package table

import (
	"encoding/json"
	"fmt"
	"go/format"
	"math/bits"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Type is a column's value type.
type Type uint8

const (
	Int32 Type = iota + 1
	Int64
	Uint64 // CSV only: a count that may pass 2^63
	String
	Bool
	// Time is unix µs (UTC): a Parquet TIMESTAMP(MICROS, UTC), the finest
	// timestamp that every engine reads with default settings (Spark
	// refuses NANOS), and in CSV ISO 8601 text. A table keeps the exact
	// time beside it, in an Int64 column of unix ns.
	Time
	JSON // CSV only: the field as JSON text
)

// Column is one column of a table.
type Column struct {
	Name  string
	Field string // the record's field that holds the value
	Type  Type
	// Dict marks a string column that Parquet stores dictionary-encoded
	// (few distinct values: names, kinds).
	Dict bool
	// Null marks a column whose 0 means "none": Parquet stores it as null
	// (optional), CSV as an empty field.
	Null bool
	Unit string // "ns", "bytes", "unix ns"; "" when the value has none
	Doc  string // the meaning, one line of SCHEMA.md
}

// Table is an ordered list of the columns of records R.
type Table[R any] struct {
	Name    string // as SCHEMA.md's markers name it: "events", "openmp", ...
	Columns []Column
	// Append, when set, is the generated form of AppendCSV (GoCSV); a test
	// of the declaring package keeps it current.
	Append func(b []byte, r *R) []byte

	once   sync.Once
	fields []int // Columns' field indexes in R
	err    error
}

// Names returns the column names in order.
func (t *Table[R]) Names() []string {
	out := make([]string, len(t.Columns))
	for i := range t.Columns {
		out[i] = t.Columns[i].Name
	}
	return out
}

// CSVHeader returns the header line (with CRLF).
func (t *Table[R]) CSVHeader() string { return strings.Join(t.Names(), ",") + "\r\n" }

// AppendCSV appends r as one CSV line (RFC 4180, with CRLF): integers in
// decimal, a Null column's 0 as an empty field, booleans as true or false,
// strings quoted when they hold a comma, a quote, CR or LF.
func (t *Table[R]) AppendCSV(b []byte, r *R) []byte {
	if t.Append != nil {
		return t.Append(b, r)
	}
	return t.appendSlow(b, r)
}

// appendSlow is AppendCSV read from the declaration, by reflection.
func (t *Table[R]) appendSlow(b []byte, r *R) []byte {
	v := reflect.ValueOf(r).Elem()
	for i := range t.Columns {
		if i > 0 {
			b = append(b, ',')
		}
		b = t.Columns[i].appendText(b, v.Field(t.index(i)))
	}
	return append(b, '\r', '\n')
}

// Strings returns r's fields as CSV text, unquoted.
func (t *Table[R]) Strings(r *R) []string {
	v := reflect.ValueOf(r).Elem()
	out := make([]string, len(t.Columns))
	for i := range t.Columns {
		f := v.Field(t.index(i))
		if t.Columns[i].Type == String {
			out[i] = f.String()
		} else {
			out[i] = string(t.Columns[i].appendText(nil, f))
		}
	}
	return out
}

// index returns the field index of column i; a declaration that names no
// field of R is a programming error that Check reports in tests.
func (t *Table[R]) index(i int) int {
	t.once.Do(func() {
		rt := reflect.TypeFor[R]()
		t.fields = make([]int, len(t.Columns))
		for i := range t.Columns {
			f, ok := rt.FieldByName(t.Columns[i].Field)
			if !ok || len(f.Index) != 1 {
				t.err = fmt.Errorf("table %s: column %s: %s has no field %q", t.Name, t.Columns[i].Name, rt, t.Columns[i].Field)
				continue
			}
			t.fields[i] = f.Index[0]
		}
	})
	if t.err != nil {
		panic(t.err)
	}
	return t.fields[i]
}

func (c *Column) appendText(b []byte, v reflect.Value) []byte {
	switch c.Type {
	case String:
		return AppendField(b, v.String())
	case Bool:
		return strconv.AppendBool(b, v.Bool())
	case Uint64:
		return strconv.AppendUint(b, v.Uint(), 10)
	case JSON:
		j, _ := json.Marshal(v.Interface())
		return append(b, j...)
	}
	n := v.Int()
	if n == 0 && c.Null {
		return b
	}
	if c.Type == Time {
		return AppendTime(b, n)
	}
	return AppendInt(b, n)
}

// AppendTime appends unix µs us as ISO 8601 UTC text with six decimals,
// 2026-11-23T23:45:01.000123Z, which DuckDB, pandas (parse_dates) and Spark
// read as a timestamp. Written out by hand: time.Time's formatting costs
// several times a whole CSV line.
func AppendTime(b []byte, us int64) []byte {
	secs, frac := us/1e6, us%1e6
	if frac < 0 {
		secs, frac = secs-1, frac+1e6
	}
	days, sod := secs/86400, secs%86400
	if sod < 0 {
		days, sod = days-1, sod+86400
	}
	y, m, d := civil(days)
	if y < 0 || y > 9999 { // not a time a trace can hold: keep the number
		return strconv.AppendInt(b, us, 10)
	}
	const n = len("2026-11-23T23:45:01.000123Z")
	b = slices.Grow(b, n)
	out := b[len(b) : len(b)+n]
	// Unsigned from here (all of it is 0 or more): dividing a signed
	// number by a constant takes a sign correction too.
	yy, sec, us6 := uint64(y), uint64(sod), uint64(frac)
	hh := sec / 3600
	sec -= hh * 3600
	mm := sec / 60
	put2(out[0:], yy/100)
	put2(out[2:], yy%100)
	out[4] = '-'
	put2(out[5:], uint64(m))
	out[7] = '-'
	put2(out[8:], uint64(d))
	out[10] = 'T'
	put2(out[11:], hh)
	out[13] = ':'
	put2(out[14:], mm)
	out[16] = ':'
	put2(out[17:], sec-mm*60)
	out[19] = '.'
	f1, f2 := us6/10000, us6/100
	put2(out[20:], f1)
	put2(out[22:], f2-f1*100)
	put2(out[24:], us6-f2*100)
	out[26] = 'Z'
	return b[:len(b)+n]
}

// put2 writes v < 100 as two digits.
func put2(out []byte, v uint64) {
	p := digitPairs[2*v : 2*v+2] // one bounds check for both
	out[0], out[1] = p[0], p[1]
}

// lastCivil caches civil's last answer, day<<32 | year<<16 | month<<8 |
// day of month: a table's times fall on one day or a few, and the civil
// date costs more than the rest of the line's time. Atomic, as converters
// run one per trace in parallel; a year of 0 marks it empty (year 0 is
// then converted each time, as it is in range but never cached).
var lastCivil atomic.Uint64

// civil returns the civil date of days since 1970-01-01 (H. Hinnant's
// days_from_civil inverted), exact for every int64 day count in range.
func civil(days int64) (y, m, d int64) {
	if c := lastCivil.Load(); c>>16&0xffff != 0 && int64(int32(c>>32)) == days {
		return int64(c >> 16 & 0xffff), int64(c >> 8 & 0xff), int64(c & 0xff)
	}
	z := days + 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	if y > 0 && y <= 9999 && int64(int32(days)) == days {
		lastCivil.Store(uint64(uint32(days))<<32 | uint64(y)<<16 | uint64(m)<<8 | uint64(d))
	}
	return y, m, d
}

// AppendInt appends v in decimal. Most columns of most rows hold a small
// number (0 mostly), and the rest ids and unix ns: the digits are written
// in place, where strconv formats into a buffer of its own and copies (a
// fifth of CSV's cost). Eight digits at a time below the top ones: their
// four pairs do not wait on each other, where dividing by 100 again and
// again makes one chain of multiplies as long as the number.
func AppendInt(b []byte, v int64) []byte {
	if uint64(v) < 10 { // small enough to inline: no call for the zeros
		return append(b, byte('0'+v))
	}
	return appendIntLong(b, v)
}

func appendIntLong(b []byte, v int64) []byte {
	u := uint64(v)
	if v < 0 {
		b = append(b, '-')
		u = -u // also right for math.MinInt64
	}
	n := decimalLen(u)
	b = slices.Grow(b, n)
	out := b[len(b) : len(b)+n]
	i := n
	for u >= 1e8 {
		q := u / 1e8
		put8(out[i-8:i], u-q*1e8)
		i -= 8
		u = q
	}
	for u >= 100 {
		q := u / 100
		r := 2 * (u - 100*q)
		i -= 2
		out[i], out[i+1] = digitPairs[r], digitPairs[r+1]
		u = q
	}
	if u >= 10 {
		out[i-2], out[i-1] = digitPairs[2*u], digitPairs[2*u+1]
	} else {
		out[i-1] = byte('0' + u)
	}
	return b[:len(b)+n]
}

// put8 writes x < 1e8 as exactly eight digits.
func put8(out []byte, x uint64) {
	_ = out[7]
	hi := x / 1e4
	lo := x - hi*1e4
	h1, l1 := hi/100, lo/100
	h2, l2 := 2*(hi-h1*100), 2*(lo-l1*100)
	h1, l1 = 2*h1, 2*l1
	out[0], out[1] = digitPairs[h1], digitPairs[h1+1]
	out[2], out[3] = digitPairs[h2], digitPairs[h2+1]
	out[4], out[5] = digitPairs[l1], digitPairs[l1+1]
	out[6], out[7] = digitPairs[l2], digitPairs[l2+1]
}

// digitPairs is "00", "01", ... "99": AppendInt's two digits at a time.
const digitPairs = "0001020304050607080910111213141516171819" +
	"2021222324252627282930313233343536373839" +
	"4041424344454647484950515253545556575859" +
	"6061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// decimalLen is the number of decimal digits of u > 0: t = floor(bits *
// log10(2)) (1233/4096 is log10(2) close enough for 64 bits) is that
// number or one less.
func decimalLen(u uint64) int {
	t := bits.Len64(u) * 1233 >> 12
	if u >= pow10[t] {
		return t + 1
	}
	return t
}

// pow10[i] is 10^i.
var pow10 = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// AppendField appends s as a CSV field, quoted when it holds a comma, a
// quote, CR or LF. The fields are short names, for which
// strings.ContainsAny's setup costs more than mayQuote's scan.
func AppendField(b []byte, s string) []byte {
	if mayQuote(s) {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c == ',' || c == '"' || c == '\r' || c == '\n' {
				b = append(b, '"')
				b = append(b, strings.ReplaceAll(s, `"`, `""`)...)
				return append(b, '"')
			}
		}
	}
	return append(b, s...)
}

// mayQuote reports whether s has a byte below '-', as each of ',', '"', CR
// and LF is: names rarely do, and this checks eight bytes at a time, where
// the exact test goes byte by byte. (A word has a byte below n <= 128 when
// subtracting n from every byte borrows into a byte whose top bit was 0.)
// The bytes past the last whole word are checked in one word too, made of
// loads that overlap: most names are short, and a loop over their last
// bytes cost more than the rest.
func mayQuote(s string) bool {
	n := len(s)
	switch {
	case n >= 8:
		for i := 0; i+8 <= n; i += 8 {
			if below(le64(s[i : i+8])) {
				return true
			}
		}
		return below(le64(s[n-8:]))
	case n >= 4:
		return below(le32(s[:4]) | le32(s[n-4:])<<32)
	case n > 0:
		// Three loads cover up to three bytes; 'A's fill the rest.
		return below(uint64(s[0]) | uint64(s[n/2])<<8 | uint64(s[n-1])<<16 | 0x41414141_41<<24)
	}
	return false
}

// below reports whether a byte of w may be below '-' (see mayQuote).
func below(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	return (w-ones*'-')&^w&highs != 0
}

// le64 and le32 load the first eight and four bytes of s as one word,
// with one bounds check.
func le64(s string) uint64 {
	t := s[:8]
	return uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
		uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
}

func le32(s string) uint64 {
	t := s[:4]
	return uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24
}

// ParquetTag returns the `parquet` struct tag that the record field of c
// carries: parquet-go reads the Parquet schema from these tags, so they
// derive from the column (Check).
func (c *Column) ParquetTag() string {
	tag := c.Name
	if c.Dict {
		tag += ",dict"
	}
	if c.Null {
		tag += ",optional"
	}
	switch {
	case c.Type == Time:
		tag += ",timestamp(microsecond:utc)"
	case c.Type == JSON:
		tag += ",list"
	}
	if c.Type == Int32 || c.Type == Int64 || c.Type == Uint64 || c.Type == Time {
		// Ids, counters and close times become a few bits each before
		// compression: Parquet writes a quarter faster than with PLAIN, for
		// files about a tenth larger. Set per column: parquet-go's writer
		// option for a default encoding also clears the page bounds of the
		// dictionary-encoded strings, which Spark then prunes every page by.
		tag += ",delta"
	}
	return tag
}

// goKinds are the Go kinds a record field of each type may have.
var goKinds = map[Type][]reflect.Kind{Int32: {reflect.Int32}, Int64: {reflect.Int64, reflect.Int}, Time: {reflect.Int64},
	Uint64: {reflect.Uint64}, String: {reflect.String}, Bool: {reflect.Bool}}

// Check reports a column whose field R lacks or whose field has another
// type; with parquet set, also where R's fields disagree with the columns
// in number, order or `parquet` tag (parquet-go takes the Parquet schema
// from R). Tests call it, so that a column added without its field (or
// the reverse) fails.
func (t *Table[R]) Check(parquet bool) error {
	rt := reflect.TypeFor[R]()
	if parquet && rt.NumField() != len(t.Columns) {
		return fmt.Errorf("table %s: %s has %d fields, the table %d columns", t.Name, rt, rt.NumField(), len(t.Columns))
	}
	for i := range t.Columns {
		c := &t.Columns[i]
		f, ok := rt.FieldByName(c.Field)
		if !ok || len(f.Index) != 1 {
			return fmt.Errorf("table %s: column %s: %s has no field %q", t.Name, c.Name, rt, c.Field)
		}
		if kinds, ok := goKinds[c.Type]; ok && !contains(kinds, f.Type.Kind()) || c.Type == 0 {
			return fmt.Errorf("table %s: column %s is %v, field %s.%s %v", t.Name, c.Name, kinds, rt, f.Name, f.Type)
		}
		if !parquet {
			continue
		}
		if f.Index[0] != i {
			return fmt.Errorf("table %s: column %s (%d) is field %s.%s, number %d", t.Name, c.Name, i, rt, f.Name, f.Index[0])
		}
		if f.Tag.Get("parquet") != c.ParquetTag() {
			return fmt.Errorf("table %s: field %s.%s has tag parquet:%q, want %q", t.Name, rt, f.Name, f.Tag.Get("parquet"), c.ParquetTag())
		}
	}
	return nil
}

func contains(ks []reflect.Kind, k reflect.Kind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// GoCSV returns the Go source of fn, AppendCSV for t's records named
// record, as straight-line code: a test of the declaring package compares
// it with the generated file and rewrites it with -update. table is the
// name under which the file imports this package.
func (t *Table[R]) GoCSV(fn, record string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s appends r as one CSV line of the %s table (with CRLF).\n", fn, t.Name)
	fmt.Fprintf(&b, "func %s(b []byte, r *%s) []byte {\n", fn, record)
	for i := range t.Columns {
		c := &t.Columns[i]
		if i > 0 {
			b.WriteString("\tb = append(b, ',')\n")
		}
		f := "r." + c.Field
		switch c.Type {
		case String:
			fmt.Fprintf(&b, "\tb = table.AppendField(b, %s)\n", f)
		case Bool:
			fmt.Fprintf(&b, "\tb = strconv.AppendBool(b, %s)\n", f)
		case Uint64:
			fmt.Fprintf(&b, "\tb = strconv.AppendUint(b, %s, 10)\n", f)
		case JSON:
			panic("table: GoCSV: JSON column " + c.Name)
		default:
			app := fmt.Sprintf("table.AppendInt(b, int64(%s))", f)
			if c.Type == Time {
				app = fmt.Sprintf("table.AppendTime(b, %s)", f)
			}
			if c.Null {
				fmt.Fprintf(&b, "\tif %s != 0 {\n\tb = %s\n\t}\n", f, app)
			} else {
				fmt.Fprintf(&b, "\tb = %s\n", app)
			}
		}
	}
	b.WriteString("\treturn append(b, '\\r', '\\n')\n}\n")
	return b.String()
}

// Markdown returns the column list of SCHEMA.md: with parquet, the
// Parquet type and the dtype pandas (pyarrow) reads; else the CSV text.
func (t *Table[R]) Markdown(parquet bool) string {
	var b strings.Builder
	if parquet {
		b.WriteString("| column | Parquet type | pandas (pyarrow) dtype | unit | meaning |\n|---|---|---|---|---|\n")
	} else {
		b.WriteString("| column | CSV text | unit | meaning |\n|---|---|---|---|\n")
	}
	for i := range t.Columns {
		c := &t.Columns[i]
		if parquet {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", c.Name, c.parquetType(), c.pandasType(), c.Unit, c.Doc)
		} else {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", c.Name, c.csvType(), c.Unit, c.Doc)
		}
	}
	return b.String()
}

func (c *Column) parquetType() string {
	s := map[Type]string{Int32: "INT32", Int64: "INT64", Uint64: "INT64 UINT_64", String: "BYTE_ARRAY STRING", Bool: "BOOLEAN",
		Time: "INT64 TIMESTAMP(MICROS, UTC)", JSON: "LIST of BYTE_ARRAY STRING"}[c.Type]
	if c.Dict {
		s += ", dictionary"
	}
	if c.Null {
		s += ", optional"
	}
	return s
}

func (c *Column) pandasType() string {
	s := map[Type]string{Int32: "int32", Int64: "int64", Uint64: "uint64", String: "object", Bool: "bool",
		Time: "datetime64[us, UTC]", JSON: "object (arrays)"}[c.Type]
	if c.Null && c.Type == Time {
		return s + " (NaT when none)"
	}
	return s
}

func (c *Column) csvType() string {
	s := map[Type]string{Int32: "integer", Int64: "integer", Uint64: "integer", String: "text", Bool: "`true` or `false`",
		Time: "ISO 8601 UTC, µs (`2026-11-23T23:45:01.000123Z`)", JSON: "JSON"}[c.Type]
	if c.Null {
		s += ", empty when none"
	}
	return s
}

// GoFile returns a gofmt'ed Go file of package pkg holding funcs (from
// GoCSV), marked as generated by test.
func GoFile(pkg, test string, funcs ...string) ([]byte, error) {
	body := strings.Join(funcs, "\n")
	imports := "\t\"github.com/libocca/occa-tools/formats/table\"\n"
	if strings.Contains(body, "strconv.") {
		imports = "\t\"strconv\"\n\n" + imports
	}
	src := "// Code generated by " + test + " from the table declarations (go test -update); DO NOT EDIT.\n\n" +
		"package " + pkg + "\n\nimport (\n" + imports + ")\n\n" + body
	return format.Source([]byte(src))
}

// FileName is the name of rank's Perfetto or Chrome trace in a convert
// output directory: events-rank00003.json, and events-rank00003-1.json for
// dup 1, the second trace of the same rank.
func FileName(rank int64, dup int, ext string) string {
	if dup > 0 {
		return fmt.Sprintf("events-rank%05d-%d%s", rank, dup, ext)
	}
	return fmt.Sprintf("events-rank%05d%s", rank, ext)
}

// Path is where a convert output directory keeps table name's file for one
// trace of rank (CSV): each table in its own subdirectory, so that reading
// one directory reads one table: events/events-rank00003.csv, and
// events/events-rank00003-1.csv for dup 1, the second trace of the same rank.
func Path(name string, rank int64, dup int, ext string) string {
	suffix := ext
	if dup > 0 {
		suffix = fmt.Sprintf("-%d%s", dup, ext)
	}
	return filepath.Join(name, fmt.Sprintf("%s-rank%05d%s", name, rank, suffix))
}

// PartPath is where a convert output directory keeps shard i of n's part
// of table name, a table with one row per trace (the process table):
// processes/part-00003-of-00008.parquet. Shards of one run write into one
// directory without overwriting each other's part.
func PartPath(name string, i, n int64, ext string) string {
	return filepath.Join(name, fmt.Sprintf("part-%05d-of-%05d%s", i, n, ext))
}

// GroupPath is where a convert output directory keeps file k of shard i of
// n's part of table name, a file that holds the rows of several traces
// (Parquet): events/part-00003-of-00008-002.parquet. A shard writes one
// file per group of traces it converts at once.
func GroupPath(name string, i, n int64, k int, ext string) string {
	return filepath.Join(name, fmt.Sprintf("%s-%03d%s", GroupPrefix(i, n), k, ext))
}

// GroupPrefix is the start of the names of every file of shard i of n
// (GroupPath): what a later conversion of the same shard would replace.
func GroupPrefix(i, n int64) string { return fmt.Sprintf("part-%05d-of-%05d", i, n) }

// Sibling returns the path of table to's file that goes with table from's
// file at path (as Path and GroupPath lay them out):
// out/openmp/openmp-rank00003.csv for out/events/events-rank00003.csv,
// out/openmp/part-00000-of-00001-000.parquet for
// out/events/part-00000-of-00001-000.parquet.
func Sibling(path, from, to string) string {
	dir, base := filepath.Split(path)
	dir = filepath.Clean(dir)
	if filepath.Base(dir) == from {
		dir = filepath.Join(filepath.Dir(dir), to)
	}
	if strings.HasPrefix(base, from) {
		base = to + strings.TrimPrefix(base, from)
	}
	return filepath.Join(dir, base)
}
