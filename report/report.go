package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/width"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/engine"
)

// Format is an output format.
type Format uint8

// The formats.
const (
	Table Format = iota
	JSON
	CSV
)

func (f Format) String() string {
	switch f {
	case JSON:
		return "json"
	case CSV:
		return "csv"
	}
	return "table"
}

// ParseFormat parses "table", "json" or "csv".
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "table", "":
		return Table, nil
	case "json":
		return JSON, nil
	case "csv":
		return CSV, nil
	}
	return Table, fmt.Errorf("unknown format %q (want table, json or csv)", s)
}

// Report is what is printed: the dataset's size and the results of its
// columns, in order.
type Report struct {
	Rows  int64
	Files int
	// Kept, when set, is the number of rows a filter kept (arrowagg
	// --where), which the results are of: the JSON output has it as "kept"
	// after "files", the table's last line says it.
	Kept    *int64
	Aggs    agg.Set // requested aggregates; 0 means all
	Columns []engine.Result
	// Plan, when set, is printed in the JSON output as "plan" beside
	// "columns" (one entry per column, in the same order), each entry
	// {"name", "backend", "location", "bytes", "gpu_fraction",
	// "estimated_s", "measured_s", "reason"}: location is where the data
	// was (host, pinned, or device for columns resident on the GPU) and
	// reason says why, residency and evictions included.
	Plan []engine.ColumnPlan
	// Skipped, when not nil, are the inputs left out because they could
	// not be read (--on-error skip): the JSON output lists them as
	// "skipped" (an array, empty when none was), the table's last line
	// counts them.
	Skipped []Skipped
}

// Skipped is an input left out, and why.
type Skipped struct {
	Path, Error string
}

type row struct {
	name, typ string
	vals      []value
}

// aggs is the requested set (agg.Normalize: the default when none was named).
func (r Report) aggs() agg.Set { return agg.Normalize(r.Aggs) }

func (r Report) rows() ([]row, error) {
	aggs := r.aggs()
	out := make([]row, len(r.Columns))
	for i, c := range r.Columns {
		if c.Err != nil {
			return nil, fmt.Errorf("column %q was not aggregated: %w", c.Name, c.Err)
		}
		vals, err := values(c, aggs)
		if err != nil {
			return nil, err
		}
		out[i] = row{name: c.Name, typ: c.Type.String(), vals: vals}
	}
	return out, nil
}

// Write prints the report in format f. The output is built in full before
// anything is written.
func Write(w io.Writer, f Format, r Report) error {
	rows, err := r.rows()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	switch f {
	case JSON:
		writeJSON(&buf, r, rows)
	case CSV:
		if err := writeCSV(&buf, r, rows); err != nil {
			return err
		}
	default:
		writeTable(&buf, r, rows)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// jsonString quotes s as a JSON string (without escaping <, > and &).
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

func (v value) json() string {
	switch v.kind {
	case number, boolean:
		return v.s
	case text:
		return jsonString(v.s)
	}
	return "null"
}

func writeJSON(b *bytes.Buffer, r Report, rows []row) {
	fmt.Fprintf(b, "{\n  \"rows\": %d,\n  \"files\": %d,\n", r.Rows, r.Files)
	if r.Kept != nil {
		fmt.Fprintf(b, "  \"kept\": %d,\n", *r.Kept)
	}
	b.WriteString("  \"columns\": [")
	for i, rw := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(b, "\n    {\"name\": %s, \"type\": %s", jsonString(rw.name), jsonString(rw.typ))
		for j, a := range aggOrder {
			if listed(a.agg, r.aggs()) {
				fmt.Fprintf(b, ", %q: %s", a.name, rw.vals[j].json())
			}
		}
		b.WriteByte('}')
	}
	if len(rows) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("]")
	writeSkippedJSON(b, r.Skipped)
	if r.Plan != nil {
		b.WriteString(",\n  \"plan\": [")
		for i, p := range r.Plan {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(b, "\n    {\"name\": %s, \"backend\": %s, \"location\": %s, \"bytes\": %d, \"gpu_fraction\": %s, \"estimated_s\": %s, \"measured_s\": %s, \"reason\": %s}",
				jsonString(p.Name), jsonString(p.BackendName()), jsonString(p.LocationName()), p.Bytes,
				strconv.FormatFloat(p.GPUFraction, 'g', -1, 64), strconv.FormatFloat(p.Estimated.Seconds(), 'g', -1, 64),
				strconv.FormatFloat(p.Measured.Seconds(), 'g', -1, 64), jsonString(p.Reason))
		}
		if len(r.Plan) > 0 {
			b.WriteString("\n  ")
		}
		b.WriteString("]")
	}
	b.WriteString("\n}\n")
}

// writeCSV writes RFC 4180 CSV: a null is an empty field, an empty string
// the quoted "" (so that the two differ), and a field with a comma, a
// quote, a line break or a leading space is quoted.
func writeCSV(b *bytes.Buffer, r Report, rows []row) error {
	line := func(fields []value) {
		for i, f := range fields {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(csvField(f))
		}
		b.WriteByte('\n')
	}
	header := []value{textOf("name"), textOf("type")}
	for _, a := range aggOrder {
		if listed(a.agg, r.aggs()) {
			header = append(header, textOf(a.name))
		}
	}
	line(header)
	for _, rw := range rows {
		rec := []value{textOf(rw.name), textOf(rw.typ)}
		for j, v := range rw.vals {
			if listed(aggOrder[j].agg, r.aggs()) {
				rec = append(rec, v)
			}
		}
		line(rec)
	}
	return nil
}

// csvField is the CSV form of v.
func csvField(v value) string {
	switch {
	case v.kind == null:
		return ""
	case v.kind == number: // (digits, a sign, a point, an exponent)
		return v.s
	case v.kind == text && v.s == "",
		strings.ContainsAny(v.s, ",\"\r\n") || strings.HasPrefix(v.s, " ") || strings.HasPrefix(v.s, "\t"):
		return `"` + strings.ReplaceAll(v.s, `"`, `""`) + `"`
	}
	return v.s
}

// maxCell is the widest a table cell gets before it is cut.
const maxCell = 40

// cellText is the table form of a string: quoted when it has control
// characters, and cut when cut is set and it is long.
func cellText(s string, cut bool) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		s = strconv.Quote(s)
	}
	if cut && displayWidth(s) > maxCell {
		var out strings.Builder
		w := 0
		for _, r := range s {
			rw := runeWidth(r)
			if w+rw > maxCell-3 {
				break
			}
			out.WriteRune(r)
			w += rw
		}
		s = out.String() + "..."
	}
	return s
}

func runeWidth(r rune) int {
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

func writeTable(b *bytes.Buffer, r Report, rows []row) {
	aggs := r.aggs()
	header := []string{"column", "type"}
	var shown []int
	for j, a := range aggOrder {
		if aggs.Has(a.agg) {
			header = append(header, a.name)
			shown = append(shown, j)
		}
	}
	cells := [][]string{header}
	for _, rw := range rows {
		line := []string{cellText(rw.name, false), cellText(rw.typ, false)}
		for _, j := range shown {
			v := rw.vals[j]
			if v.kind == null {
				line = append(line, "null")
			} else {
				line = append(line, cellText(v.s, true))
			}
		}
		cells = append(cells, line)
	}
	drawTable(b, cells, 2)
	fmt.Fprintf(b, "%s, %s", plural(r.Rows, "row"), plural(int64(r.Files), "file"))
	if r.Kept != nil {
		fmt.Fprintf(b, ", %s kept", plural(*r.Kept, "row"))
	}
	if r.Skipped != nil {
		fmt.Fprintf(b, ", %d skipped", len(r.Skipped))
	}
	b.WriteByte('\n')
}

// drawTable writes cells (a header, then rows) as aligned columns under a
// rule, the first left columns to the left, the others to the right.
func drawTable(b *bytes.Buffer, cells [][]string, left int) {
	widths := make([]int, len(cells[0]))
	for _, line := range cells {
		for c, s := range line {
			widths[c] = max(widths[c], displayWidth(s))
		}
	}
	for i, line := range cells {
		var l strings.Builder
		for c, s := range line {
			pad := strings.Repeat(" ", widths[c]-displayWidth(s))
			if c > 0 {
				l.WriteString("  ")
			}
			if c < left {
				l.WriteString(s + pad)
			} else {
				l.WriteString(pad + s)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteByte('\n')
		if i == 0 {
			var sep strings.Builder
			for c, w := range widths {
				if c > 0 {
					sep.WriteString("  ")
				}
				sep.WriteString(strings.Repeat("-", w))
			}
			b.WriteString(sep.String() + "\n")
		}
	}
}

func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.FormatInt(n, 10) + " " + what + "s"
}
