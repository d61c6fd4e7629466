package summary

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Formats lists the output formats of Write.
var Formats = []string{"table", "csv", "json", "markdown"}

// Write writes the report in format (one of Formats). With section set,
// only that table is written (for CSV, a plain file that pandas reads).
func (r *Report) Write(w io.Writer, format, section string) error {
	tables := r.Tables
	if section != "" {
		t := r.Table(section)
		if t == nil {
			names := make([]string, len(r.Tables))
			for i, t := range r.Tables {
				names[i] = t.Name
			}
			return fmt.Errorf("no section %q (have %s)", section, strings.Join(names, ", "))
		}
		tables = []*Table{t}
	}
	switch format {
	case "table", "":
		return r.writeText(w, tables, false, section == "")
	case "markdown":
		return r.writeText(w, tables, true, section == "")
	case "csv":
		return writeCSV(w, tables, section != "")
	case "json":
		return r.writeJSON(w, tables)
	}
	return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(Formats, ", "))
}

// raw formats a cell for CSV: plain numbers, ns and bytes as integers.
func raw(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case Dur:
		return strconv.FormatInt(int64(v), 10)
	case Bytes:
		return strconv.FormatUint(uint64(v), 10)
	case Rate:
		return strconv.FormatFloat(float64(v), 'f', 0, 64)
	case float64:
		return strconv.FormatFloat(v, 'f', 4, 64)
	}
	return fmt.Sprint(v)
}

// human formats a cell for people.
func human(v any) string {
	switch v := v.(type) {
	case Dur:
		return FormatDuration(int64(v))
	case Bytes:
		return FormatBytes(float64(v), "B")
	case Rate:
		return FormatBytes(float64(v), "B/s")
	case float64:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return raw(v)
}

// FormatDuration formats ns for people: "0", "950ns", "1.234us",
// "12.345ms", "1.500s". It is the one duration format of the reports.
func FormatDuration(ns int64) string {
	f := float64(ns)
	switch {
	case ns == 0:
		return "0"
	case math.Abs(f) < 1e3:
		return fmt.Sprintf("%dns", ns)
	case math.Abs(f) < 1e6:
		return fmt.Sprintf("%.3fus", f/1e3)
	case math.Abs(f) < 1e9:
		return fmt.Sprintf("%.3fms", f/1e6)
	}
	return fmt.Sprintf("%.3fs", f/1e9)
}

// FormatBytes formats b (of unit "B", "B/s") for people in binary units:
// "512 B", "1.50 KiB", "2.00 GiB/s", and a whole number of its unit without
// decimals ("64 MiB", as a config gives it). It is the one byte format of
// the reports.
func FormatBytes(b float64, unit string) string {
	units := []string{"", "Ki", "Mi", "Gi", "Ti", "Pi"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 || b == math.Trunc(b) {
		return fmt.Sprintf("%.0f %s%s", b, units[i], unit)
	}
	return fmt.Sprintf("%.2f %s%s", b, units[i], unit)
}

func (r *Report) writeText(w io.Writer, tables []*Table, md, head bool) error {
	var b strings.Builder
	if head {
		if md {
			fmt.Fprintf(&b, "# occa-tools summary\n\n")
		}
		for _, s := range r.Warnings {
			if md {
				fmt.Fprintf(&b, "> **WARNING:** %s\n\n", s)
			} else {
				fmt.Fprintf(&b, "WARNING: %s\n", s)
			}
		}
		fmt.Fprintf(&b, "%d ranks, %d events, %d dropped\n\n", r.Ranks, r.Events, r.Dropped)
	}
	for _, t := range tables {
		if len(t.Rows) == 0 {
			continue
		}
		t = t.forPeople()
		cells := make([][]string, len(t.Rows))
		width := make([]int, len(t.Columns))
		for i, c := range t.Columns {
			width[i] = len(c)
		}
		for i, row := range t.Rows {
			cells[i] = make([]string, len(row))
			for j, v := range row {
				s := human(v)
				if md {
					s = strings.ReplaceAll(s, "|", `\|`)
				}
				cells[i][j] = s
				width[j] = max(width[j], len(s))
			}
		}
		if md {
			fmt.Fprintf(&b, "## %s\n\n", t.Title)
			b.WriteString("| " + strings.Join(t.Columns, " | ") + " |\n|")
			for _, v := range t.Rows[0] {
				if _, ok := v.(string); ok {
					b.WriteString("---|")
				} else {
					b.WriteString("---:|")
				}
			}
			b.WriteString("\n")
			for _, row := range cells {
				b.WriteString("| " + strings.Join(row, " | ") + " |\n")
			}
			b.WriteString("\n")
			continue
		}
		fmt.Fprintf(&b, "== %s ==\n", t.Title)
		line := func(vals []string, left func(int) bool) {
			for j, s := range vals {
				if j > 0 {
					b.WriteString("  ")
				}
				if left(j) {
					fmt.Fprintf(&b, "%-*s", width[j], s)
				} else {
					fmt.Fprintf(&b, "%*s", width[j], s)
				}
			}
			b.WriteString("\n")
		}
		isText := func(j int) bool { _, ok := t.Rows[0][j].(string); return ok }
		line(t.Columns, isText)
		for _, row := range cells {
			line(row, isText)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, strings.TrimRight(b.String(), "\n")+"\n")
	return err
}

// forPeople is t as the text and markdown tables show it: without its
// sparse columns that hold only zeros, and with the unit suffix taken off
// the names of columns whose cells carry their unit (total_ns -> total,
// since human prints "1.500us"; bandwidth_bytes_per_s -> bandwidth).
func (t *Table) forPeople() *Table {
	keep := make([]int, 0, len(t.Columns))
	for j, c := range t.Columns {
		if slices.Contains(t.Sparse, c) && allZero(t.Rows, j) {
			continue
		}
		keep = append(keep, j)
	}
	out := &Table{Name: t.Name, Title: t.Title, Columns: make([]string, len(keep)), Rows: make([][]any, len(t.Rows))}
	for i, j := range keep {
		c := t.Columns[j]
		switch t.Rows[0][j].(type) {
		case Dur:
			c = strings.TrimSuffix(c, "_ns")
		case Rate:
			c = strings.TrimSuffix(c, "_bytes_per_s")
		}
		out.Columns[i] = c
	}
	for r, row := range t.Rows {
		out.Rows[r] = make([]any, len(keep))
		for i, j := range keep {
			out.Rows[r][i] = row[j]
		}
	}
	return out
}

func allZero(rows [][]any, j int) bool {
	for _, row := range rows {
		switch v := row[j].(type) {
		case int64:
			if v != 0 {
				return false
			}
		case Dur:
			if v != 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func writeCSV(w io.Writer, tables []*Table, plain bool) error {
	cw := csv.NewWriter(w)
	for i, t := range tables {
		if !plain {
			if i > 0 {
				cw.Write(nil)
			}
			cw.Flush()
			if _, err := fmt.Fprintf(w, "# %s\n", t.Name); err != nil {
				return err
			}
		}
		cw.Write(t.Columns)
		for _, row := range t.Rows {
			rec := make([]string, len(row))
			for j, v := range row {
				rec[j] = raw(v)
			}
			cw.Write(rec)
		}
	}
	cw.Flush()
	return cw.Error()
}

func (r *Report) writeJSON(w io.Writer, tables []*Table) error {
	type jt struct {
		Name    string           `json:"name"`
		Title   string           `json:"title"`
		Rows    []map[string]any `json:"rows"`
		Columns []string         `json:"columns"`
	}
	out := struct {
		Ranks    int      `json:"ranks"`
		Events   uint64   `json:"events"`
		Dropped  uint64   `json:"dropped"`
		Warnings []string `json:"warnings"`
		Tables   []jt     `json:"tables"`
	}{r.Ranks, r.Events, r.Dropped, r.Warnings, nil}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	for _, t := range tables {
		j := jt{Name: t.Name, Title: t.Title, Columns: t.Columns, Rows: []map[string]any{}}
		for _, row := range t.Rows {
			m := make(map[string]any, len(row))
			for i, v := range row {
				switch v := v.(type) {
				case Dur:
					m[t.Columns[i]] = int64(v)
				case Bytes:
					m[t.Columns[i]] = uint64(v)
				case Rate:
					m[t.Columns[i]] = math.Round(float64(v))
				default:
					m[t.Columns[i]] = v
				}
			}
			j.Rows = append(j.Rows, m)
		}
		out.Tables = append(out.Tables, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
