package table

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

type rec struct {
	N    int32    `parquet:"n,delta"`
	S    string   `parquet:"s,dict"`
	T    int64    `parquet:"t,optional,timestamp(microsecond:utc),delta"`
	B    bool     `parquet:"b"`
	Many uint64   `parquet:"many,delta"`
	List []string `parquet:"list"`
}

func cols() []Column {
	return []Column{
		{Name: "n", Field: "N", Type: Int32, Doc: "a number"},
		{Name: "s", Field: "S", Type: String, Dict: true, Doc: "a name"},
		{Name: "t", Field: "T", Type: Time, Null: true, Unit: "unix µs", Doc: "a time"},
		{Name: "b", Field: "B", Type: Bool, Doc: "a flag"},
		{Name: "many", Field: "Many", Type: Uint64, Doc: "a count"},
		{Name: "list", Field: "List", Type: JSON, Doc: "a list"},
	}
}

var tbl = Table[rec]{Name: "test", Columns: cols()}

// CSV quotes what RFC 4180 asks for, leaves a Null 0 empty and writes
// integers, booleans, counts past 2^63 and JSON exactly.
func TestCSV(t *testing.T) {
	if got := tbl.CSVHeader(); got != "n,s,t,b,many,list\r\n" {
		t.Errorf("header %q", got)
	}
	for _, c := range []struct {
		r    rec
		want string
	}{
		{rec{N: -3, S: "plain", T: 0, B: true, Many: 1 << 63}, "-3,plain,,true,9223372036854775808,null\r\n"},
		{rec{N: 1, S: `a,"b"`, T: 5, List: []string{}}, "1,\"a,\"\"b\"\"\",1970-01-01T00:00:00.000005Z,false,0,[]\r\n"},
		{rec{S: "line\nbreak", List: []string{"x"}}, "0,\"line\nbreak\",,false,0,[\"x\"]\r\n"},
	} {
		if got := string(tbl.AppendCSV(nil, &c.r)); got != c.want {
			t.Errorf("%+v: %q, want %q", c.r, got, c.want)
		}
	}
	if got := strings.Join(tbl.Strings(&rec{N: 2, S: `x"y`, T: 7, List: []string{"a,b"}}), "|"); got != `2|x"y|1970-01-01T00:00:00.000007Z|false|0|["a,b"]` {
		t.Errorf("Strings: %q", got)
	}
}

// GoCSV writes the straight-line form of AppendCSV: the same fields in the
// same order, the Null column tested.
func TestGoCSV(t *testing.T) {
	short := Table[rec]{Name: "short", Columns: cols()[:5]}
	want := `// appendShort appends r as one CSV line of the short table (with CRLF).
func appendShort(b []byte, r *rec) []byte {
	b = table.AppendInt(b, int64(r.N))
	b = append(b, ',')
	b = table.AppendField(b, r.S)
	b = append(b, ',')
	if r.T != 0 {
	b = table.AppendTime(b, r.T)
	}
	b = append(b, ',')
	b = strconv.AppendBool(b, r.B)
	b = append(b, ',')
	b = strconv.AppendUint(b, r.Many, 10)
	return append(b, '\r', '\n')
}
`
	if got := short.GoCSV("appendShort", "rec"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := GoFile("table", "TestGoCSV", want); err != nil {
		t.Error(err)
	}
}

// Check finds a missing field, a wrong tag, a wrong type and fields out
// of order.
func TestCheck(t *testing.T) {
	if err := (&Table[rec]{Name: "csv", Columns: cols()}).Check(false); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		edit    func([]Column) []Column
		parquet bool
		want    string
	}{
		{"short", func(c []Column) []Column { return c[:4] }, true, "6 fields, the table 4 columns"},
		{"tag", func(c []Column) []Column { c[1].Dict = false; return c }, true, `want "s"`},
		{"type", func(c []Column) []Column { c[0].Type = Int64; return c }, false, "column n is [int64 int], field table.rec.N int32"},
		{"field", func(c []Column) []Column { c[3].Field = "Flag"; return c }, false, `has no field "Flag"`},
		{"order", func(c []Column) []Column { c[0], c[1] = c[1], c[0]; return c }, true, "column s (0) is field table.rec.S, number 1"},
	} {
		tb := Table[rec]{Name: c.name, Columns: c.edit(cols())}
		if err := tb.Check(c.parquet); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func TestMarkdown(t *testing.T) {
	short := Table[rec]{Name: "short", Columns: cols()[:4]}
	want := "| column | Parquet type | pandas (pyarrow) dtype | unit | meaning |\n|---|---|---|---|---|\n" +
		"| n | INT32 | int32 |  | a number |\n" +
		"| s | BYTE_ARRAY STRING, dictionary | object |  | a name |\n" +
		"| t | INT64 TIMESTAMP(MICROS, UTC), optional | datetime64[us, UTC] (NaT when none) | unix µs | a time |\n" +
		"| b | BOOLEAN | bool |  | a flag |\n"
	if got := short.Markdown(true); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// FileName is the name of a Perfetto or Chrome trace that convert writes.
func TestFileName(t *testing.T) {
	for _, c := range []struct {
		rank int64
		dup  int
		ext  string
		want string
	}{{3, 0, ".parquet", "events-rank00003.parquet"}, {3, 1, ".csv", "events-rank00003-1.csv"}, {123456, 0, ".json", "events-rank123456.json"}} {
		if got := FileName(c.rank, c.dup, c.ext); got != c.want {
			t.Errorf("FileName(%d, %d, %q) = %q, want %q", c.rank, c.dup, c.ext, got, c.want)
		}
	}
}

// AppendTime writes what time.Time's RFC 3339 formatting writes, to the µs,
// across leap years, century rules, negative times and the 9999 limit
// (past which it keeps the number).
func TestAppendTime(t *testing.T) {
	us := []int64{0, 1, -1, 999999, 1e6, 951782400e6, 951868800e6 - 1, 4107542400e6, -2208988800e6 + 7,
		1795479156535883, 253402300799999999, 253402300800000000, -62135596800000000, -62135596800000001}
	for v := int64(-1e17); v < 2.6e17; v += 7777777777777 { // about 46000 values, a day apart and less
		us = append(us, v)
	}
	// Runs within a day, and days taking turns, past the cached date.
	for _, day := range []int64{0, 19_000, 20_418, -1, 2_932_896} {
		for s := int64(0); s < 86400; s += 3593 {
			us = append(us, (day*86400+s)*1e6+s%1e6, ((day+s%2)*86400+s)*1e6)
		}
	}
	for _, v := range us {
		checkTime(t, v)
	}
}

func checkTime(t *testing.T, v int64) {
	want := time.UnixMicro(v).UTC().Format("2006-01-02T15:04:05.000000Z")
	if y := time.UnixMicro(v).UTC().Year(); y < 0 || y > 9999 {
		want = strconv.FormatInt(v, 10)
	}
	if got := string(AppendTime([]byte("x,"), v)); got != "x,"+want {
		t.Fatalf("AppendTime(%d) = %q, want %q", v, got, "x,"+want)
	}
}

// Converters format times on several goroutines at once, each on days of
// its own: AppendTime's cached date must be one of theirs, never a mix.
func TestAppendTimeConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20_000 {
				checkTime(t, (int64(g*3+i%3)*86400+int64(i))*1e6+1767225600e6)
			}
		}()
	}
	wg.Wait()
}

// BenchmarkAppendTime is a table's start times: a few µs apart, on one day.
func BenchmarkAppendTime(b *testing.B) {
	buf := make([]byte, 0, 64)
	us := int64(1767225600_000_000)
	for range b.N {
		buf = AppendTime(buf[:0], us)
		us += 3
	}
}

// Path, PartPath, GroupPath and Sibling lay out a convert output directory.
func TestPaths(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Path("events", 3, 0, ".csv"), "events/events-rank00003.csv"},
		{Path("events", 123456, 1, ".csv"), "events/events-rank123456-1.csv"},
		{PartPath("processes", 3, 8, ".parquet"), "processes/part-00003-of-00008.parquet"},
		{GroupPath("events", 3, 8, 2, ".parquet"), "events/part-00003-of-00008-002.parquet"},
		{Sibling("out/events/part-00003-of-00008-002.parquet", "events", "openmp"), "out/openmp/part-00003-of-00008-002.parquet"},
		{Sibling("out/events/events-rank00003.csv", "events", "dependences"), "out/dependences/dependences-rank00003.csv"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

// TestAppendInt compares AppendInt with strconv at every power of ten and
// its neighbours, both signs, the extremes, and appending after text.
func TestAppendInt(t *testing.T) {
	vals := []int64{0, 1, 9, math.MaxInt64, math.MinInt64, math.MinInt64 + 1, 1767225600000001000}
	for p := int64(1); p <= math.MaxInt64/10; p *= 10 {
		vals = append(vals, p-1, p, p+1, 10*p-1)
	}
	for _, v := range vals {
		for _, w := range []int64{v, -v} {
			if got, want := string(AppendInt([]byte("x,"), w)), "x,"+strconv.FormatInt(w, 10); got != want {
				t.Errorf("AppendInt(%d) = %q, want %q", w, got, want)
			}
		}
	}
}

// appendFieldRef is AppendField as RFC 4180 states it.
func appendFieldRef(b []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return append(b, s...)
	}
	return append(append(append(b, '"'), strings.ReplaceAll(s, `"`, `""`)...), '"')
}

// TestAppendField puts each byte value at each position of strings of up
// to 20 bytes, so that every word and tail position of mayQuote's scan
// meets quoted and unquoted bytes, next to bytes just above and below '-'
// and above 127.
func TestAppendField(t *testing.T) {
	for n := range 21 {
		for pos := range n {
			for c := range 256 {
				buf := []byte(strings.Repeat("k.-\x80", 7)[:n])
				buf[pos] = byte(c)
				s := string(buf)
				if got, want := string(AppendField([]byte("x,"), s)), string(appendFieldRef([]byte("x,"), s)); got != want {
					t.Fatalf("AppendField(%q) = %q, want %q", s, got, want)
				}
			}
		}
	}
}

func FuzzAppendField(f *testing.F) {
	f.Add("run_kernel")
	f.Add("a,b\"c\r\n, and more than eight bytes")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(AppendField(nil, s)), string(appendFieldRef(nil, s)); got != want {
			t.Fatalf("AppendField(%q) = %q, want %q", s, got, want)
		}
	})
}

func FuzzAppendInt(f *testing.F) {
	f.Add(int64(0))
	f.Add(int64(math.MinInt64))
	f.Add(int64(1767225600000001000))
	f.Fuzz(func(t *testing.T, v int64) {
		if got, want := string(AppendInt(nil, v)), strconv.FormatInt(v, 10); got != want {
			t.Fatalf("AppendInt(%d) = %q, want %q", v, got, want)
		}
	})
}

// BenchmarkAppendInt is a CSV row's integers (a unix ns time, an id, zeros)
// through AppendInt, against strconv.AppendInt in the same run.
func BenchmarkAppendInt(b *testing.B) {
	vals := []int64{1767225600000001000, 4242, 0, 0, 39000, 1 << 40, 0, 7}
	buf := make([]byte, 0, 256)
	b.Run("AppendInt", func(b *testing.B) {
		for range b.N {
			buf = buf[:0]
			for _, v := range vals {
				buf = AppendInt(buf, v)
			}
		}
	})
	b.Run("strconv", func(b *testing.B) {
		for range b.N {
			buf = buf[:0]
			for _, v := range vals {
				buf = strconv.AppendInt(buf, v, 10)
			}
		}
	})
}
