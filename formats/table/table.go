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
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Type is a column's value type.
type Type uint8

const (
	Int32 Type = iota + 1
	Int64
	Uint64 // CSV only: a count that may pass 2^63
	String
	Bool
	Time // unix ns (UTC); a Parquet TIMESTAMP(NANOS, UTC)
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
	return strconv.AppendInt(b, n, 10)
}

// AppendField appends s as a CSV field, quoted when it holds a comma, a
// quote, CR or LF.
func AppendField(b []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return append(b, s...)
	}
	b = append(b, '"')
	b = append(b, strings.ReplaceAll(s, `"`, `""`)...)
	return append(b, '"')
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
	if c.Type == Time {
		tag += ",timestamp(nanosecond:utc)"
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
			if c.Null {
				fmt.Fprintf(&b, "\tif %s != 0 {\n\tb = strconv.AppendInt(b, int64(%s), 10)\n\t}\n", f, f)
			} else {
				fmt.Fprintf(&b, "\tb = strconv.AppendInt(b, int64(%s), 10)\n", f)
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
	s := map[Type]string{Int32: "INT32", Int64: "INT64", String: "BYTE_ARRAY STRING", Bool: "BOOLEAN",
		Time: "INT64 TIMESTAMP(NANOS, UTC)"}[c.Type]
	if c.Dict {
		s += ", dictionary"
	}
	if c.Null {
		s += ", optional"
	}
	return s
}

func (c *Column) pandasType() string {
	s := map[Type]string{Int32: "int32", Int64: "int64", String: "object", Bool: "bool", Time: "datetime64[ns, UTC]"}[c.Type]
	if c.Null && c.Type == Time {
		return s + " (NaT when none)"
	}
	return s
}

func (c *Column) csvType() string {
	s := map[Type]string{Int32: "integer", Int64: "integer", Uint64: "integer", String: "text", Bool: "`true` or `false`",
		Time: "integer (unix ns)", JSON: "JSON"}[c.Type]
	if c.Null {
		s += ", empty when none"
	}
	return s
}

// GoFile returns a gofmt'ed Go file of package pkg holding funcs (from
// GoCSV), marked as generated by test.
func GoFile(pkg, test string, funcs ...string) ([]byte, error) {
	src := "// Code generated by " + test + " from the table declarations (go test -update); DO NOT EDIT.\n\n" +
		"package " + pkg + "\n\nimport (\n\t\"strconv\"\n\n\t\"github.com/libocca/occa-tools/formats/table\"\n)\n\n" +
		strings.Join(funcs, "\n")
	return format.Source([]byte(src))
}

// FileName is the name of rank's events table file (or Perfetto or Chrome
// trace) in a convert output directory: events-rank00003.parquet, and
// events-rank00003-1.parquet for dup 1, the second trace of the same rank.
// omp.TablePath names the OpenMP tables after it.
func FileName(rank int64, dup int, ext string) string {
	if dup > 0 {
		return fmt.Sprintf("events-rank%05d-%d%s", rank, dup, ext)
	}
	return fmt.Sprintf("events-rank%05d%s", rank, ext)
}
