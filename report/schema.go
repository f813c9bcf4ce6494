package report

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// Schema is what `arrowagg --schema` prints (DuckDB's DESCRIBE): the columns
// of a dataset, as arrowagg sees them (struct fields as dotted leaves), with
// the rows and files.
type Schema struct {
	Rows    int64
	Files   int
	Columns []SchemaColumn
}

// SchemaColumn is one column of a Schema.
type SchemaColumn struct {
	Name     string
	Type     string // as Arrow prints it
	Nullable bool
	// Reason says why the column is not aggregated; empty when it is.
	Reason string
}

// WriteSchema prints s in format f: a table, JSON ({"rows", "files",
// "columns": [{"name", "type", "nullable", "aggregated", "reason"}]}, reason
// null for aggregated columns) or CSV (name,type,nullable,aggregated,reason).
func WriteSchema(w io.Writer, f Format, s Schema) error {
	var b bytes.Buffer
	switch f {
	case JSON:
		fmt.Fprintf(&b, "{\n  \"rows\": %d,\n  \"files\": %d,\n  \"columns\": [", s.Rows, s.Files)
		for i, c := range s.Columns {
			if i > 0 {
				b.WriteString(",")
			}
			reason := "null"
			if c.Reason != "" {
				reason = jsonString(c.Reason)
			}
			fmt.Fprintf(&b, "\n    {\"name\": %s, \"type\": %s, \"nullable\": %t, \"aggregated\": %t, \"reason\": %s}",
				jsonString(c.Name), jsonString(c.Type), c.Nullable, c.Reason == "", reason)
		}
		if len(s.Columns) > 0 {
			b.WriteString("\n  ")
		}
		b.WriteString("]\n}\n")
	case CSV:
		b.WriteString("name,type,nullable,aggregated,reason\n")
		for _, c := range s.Columns {
			reason := nullValue
			if c.Reason != "" {
				reason = textOf(c.Reason)
			}
			fmt.Fprintf(&b, "%s,%s,%t,%t,%s\n", csvField(textOf(c.Name)), csvField(textOf(c.Type)), c.Nullable, c.Reason == "", csvField(reason))
		}
	default:
		cells := [][]string{{"column", "type", "nullable", "aggregated"}}
		for _, c := range s.Columns {
			agg := "yes"
			if c.Reason != "" {
				agg = "no: " + c.Reason
			}
			cells = append(cells, []string{cellText(c.Name, false), cellText(c.Type, false), strconv.FormatBool(c.Nullable), agg})
		}
		drawTable(&b, cells, 4)
		fmt.Fprintf(&b, "%s, %s\n", plural(s.Rows, "row"), plural(int64(s.Files), "file"))
	}
	_, err := w.Write(b.Bytes())
	return err
}
