package report

import (
	"bytes"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/scalar"

	"github.com/arrowagg/arrowagg/engine"
)

// Groups is a grouped result to print (arrowagg --group-by, --where): the
// dataset's rows and files, the rows the filter kept, and the groups as a
// record batch (engine.Grouper.Result: the key columns, count_all, then
// the aggregates of each column named "x_sum", "x_min", ...).
type Groups struct {
	Rows  int64
	Files int
	Kept  int64
	// Record holds one row per group, sorted by key.
	Record arrow.Record
	// Skipped are the inputs left out (--on-error skip); nil when not
	// skipping.
	Skipped []Skipped
}

// WriteGroups prints a grouped result in format f, building the whole
// output before writing any of it. Each value is printed as in Write's
// output (value.go). The JSON form is
//
//	{"rows": <int>, "files": <int>, "kept": <int>, "groups": [
//	  {"<key>": <value>, ..., "count_all": <int>, "<column>_<aggregate>": <value>, ...}, ...]}
//
// with "skipped" as in Write's when inputs were skipped; the table and CSV
// forms have a column per field of the record, the table then a line of
// the rows, kept rows, groups and files.
func WriteGroups(w io.Writer, f Format, g Groups) error {
	rec := g.Record
	fields := rec.Schema().Fields()
	cells := make([][]value, rec.NumRows())
	for i := range cells {
		cells[i] = make([]value, len(fields))
	}
	for c, fl := range fields {
		col := rec.Column(c)
		integer := fl.Metadata.FindKey(engine.IntegerSumKey) >= 0
		for i := range cells {
			s, err := scalar.GetScalar(col, i)
			if err != nil {
				return fmt.Errorf("column %q: %w", fl.Name, err)
			}
			v, err := scalarValue(s, fl.Type)
			if r, ok := s.(interface{ Release() }); ok {
				r.Release()
			}
			if err != nil {
				return fmt.Errorf("column %q: %w", fl.Name, err)
			}
			if integer && v.kind == text {
				v = numberOf(v.s) // (an exact integer, in decimal256(76, 0))
			}
			cells[i][c] = v
		}
	}
	var b bytes.Buffer
	switch f {
	case JSON:
		fmt.Fprintf(&b, "{\n  \"rows\": %d,\n  \"files\": %d,\n  \"kept\": %d,\n  \"groups\": [", g.Rows, g.Files, g.Kept)
		for i, row := range cells {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("\n    {")
			for c, v := range row {
				if c > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%s: %s", jsonString(fields[c].Name), v.json())
			}
			b.WriteByte('}')
		}
		if len(cells) > 0 {
			b.WriteString("\n  ")
		}
		b.WriteString("]")
		writeSkippedJSON(&b, g.Skipped)
		b.WriteString("\n}\n")
	case CSV:
		line := func(vals []value) {
			for i, v := range vals {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(csvField(v))
			}
			b.WriteByte('\n')
		}
		header := make([]value, len(fields))
		for c, fl := range fields {
			header[c] = textOf(fl.Name)
		}
		line(header)
		for _, row := range cells {
			line(row)
		}
	default:
		table := [][]string{make([]string, len(fields))}
		for c, fl := range fields {
			table[0][c] = cellText(fl.Name, false)
		}
		for _, row := range cells {
			line := make([]string, len(row))
			for c, v := range row {
				if v.kind == null {
					line[c] = "null"
				} else {
					line[c] = cellText(v.s, true)
				}
			}
			table = append(table, line)
		}
		keys := 0
		for keys < len(fields) && fields[keys].Name != "count_all" {
			keys++
		}
		if keys == len(fields) {
			keys = 0
		}
		drawTable(&b, table, keys)
		fmt.Fprintf(&b, "%s, %s kept, %s, %s", plural(g.Rows, "row"), plural(g.Kept, "row"), plural(rec.NumRows(), "group"), plural(int64(g.Files), "file"))
		if g.Skipped != nil {
			fmt.Fprintf(&b, ", %d skipped", len(g.Skipped))
		}
		b.WriteByte('\n')
	}
	_, err := w.Write(b.Bytes())
	return err
}

// writeSkippedJSON writes the "skipped" member of the JSON forms (nil: none).
func writeSkippedJSON(b *bytes.Buffer, skipped []Skipped) {
	if skipped == nil {
		return
	}
	b.WriteString(",\n  \"skipped\": [")
	for i, sk := range skipped {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(b, "\n    {\"path\": %s, \"error\": %s}", jsonString(sk.Path), jsonString(sk.Error))
	}
	if len(skipped) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("]")
}
