package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
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

// WriteGroups prints a grouped result in format f: the table is built
// whole before it is written, the JSON and CSV forms are written a window
// of rows at a time (an error while writing may leave part of them). Each
// value is printed as in Write's output (value.go). The JSON form is
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
	cols := make([]func(i int) (value, error), len(fields))
	for c, fl := range fields {
		at := cellOf(rec.Column(c), fl.Type)
		if fl.Metadata.FindKey(engine.IntegerSumKey) >= 0 {
			dec := at
			at = func(i int) (value, error) {
				v, err := dec(i)
				if v.kind == text {
					v = numberOf(v.s) // (an exact integer, in decimal256(76, 0))
				}
				return v, err
			}
		}
		cols[c] = at
	}
	rowOf := func(i int, row []value) error {
		for c, at := range cols {
			v, err := at(i)
			if err != nil {
				return fmt.Errorf("column %q: %w", fields[c].Name, err)
			}
			row[c] = v
		}
		return nil
	}
	// writers are the JSON or CSV cells of each column: written straight
	// into the buffer for numbers (directCell), through their value
	// otherwise.
	writers := func(json bool) []cellWriter {
		out := make([]cellWriter, len(cols))
		for c, at := range cols {
			if out[c] = directCell(rec.Column(c), fields[c].Type, json); out[c] != nil {
				continue
			}
			out[c] = func(b *bytes.Buffer, i int) error {
				v, err := at(i)
				if err != nil {
					return fmt.Errorf("column %q: %w", fields[c].Name, err)
				}
				if json {
					b.WriteString(v.json())
				} else {
					b.WriteString(csvField(v))
				}
				return nil
			}
		}
		return out
	}
	n := int(rec.NumRows())
	var b bytes.Buffer
	switch f {
	case JSON:
		fmt.Fprintf(&b, "{\n  \"rows\": %d,\n  \"files\": %d,\n  \"kept\": %d,\n  \"groups\": [", g.Rows, g.Files, g.Kept)
		names := make([]string, len(fields))
		for c, fl := range fields {
			names[c] = jsonString(fl.Name) + ": "
		}
		if _, err := w.Write(b.Bytes()); err != nil {
			return err
		}
		b.Reset()
		cells := writers(true)
		err := formatRows(w, n, func(b *bytes.Buffer, i int) error {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("\n    {")
			for c, cell := range cells {
				if c > 0 {
					b.WriteString(", ")
				}
				b.WriteString(names[c])
				if err := cell(b, i); err != nil {
					return err
				}
			}
			b.WriteByte('}')
			return nil
		})
		if err != nil {
			return err
		}
		if n > 0 {
			b.WriteString("\n  ")
		}
		b.WriteString("]")
		writeSkippedJSON(&b, g.Skipped)
		b.WriteString("\n}\n")
	case CSV:
		for c, fl := range fields {
			if c > 0 {
				b.WriteByte(',')
			}
			b.WriteString(csvField(textOf(fl.Name)))
		}
		b.WriteByte('\n')
		if _, err := w.Write(b.Bytes()); err != nil {
			return err
		}
		b.Reset()
		cells := writers(false)
		err := formatRows(w, n, func(b *bytes.Buffer, i int) error {
			for c, cell := range cells {
				if c > 0 {
					b.WriteByte(',')
				}
				if err := cell(b, i); err != nil {
					return err
				}
			}
			b.WriteByte('\n')
			return nil
		})
		if err != nil {
			return err
		}
	default:
		table := [][]string{make([]string, len(fields))}
		for c, fl := range fields {
			table[0][c] = cellText(fl.Name, false)
		}
		row := make([]value, len(fields))
		for i := range n {
			if err := rowOf(i, row); err != nil {
				return err
			}
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

// formatRows formats rows [0, n) with line, and writes them to w in
// order: pieces of rows are formatted by goroutines of their own, a window
// of pieces at a time, so that the output is never held whole; a window is
// written while the next one is formatted (two windows of buffers, used in
// turn).
func formatRows(w io.Writer, n int, line func(*bytes.Buffer, int) error) error {
	const piece = 16384
	pieces := (n + piece - 1) / piece
	window := 2 * runtime.GOMAXPROCS(0)
	sets := [2][]bytes.Buffer{make([]bytes.Buffer, window), make([]bytes.Buffer, window)}
	errs := make([]error, window)
	var written chan error // the write of the window before, until it is waited for
	wait := func() error {
		if written == nil {
			return nil
		}
		err := <-written
		written = nil
		return err
	}
	defer wait() //nolint:errcheck // (on an error returned: the write in flight ends first)
	for wi, first := 0, 0; first < pieces; wi, first = wi+1, first+window {
		bufs := sets[wi%2] // (its last write, two windows back, was waited for)
		count := min(window, pieces-first)
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(runtime.GOMAXPROCS(0), count) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					k := int(next.Add(1) - 1)
					if k >= count {
						return
					}
					p := first + k
					// The piece is formatted into a Buffer of the
					// goroutine's own, then stored back: the window's
					// Buffers lie side by side, and one updated in place
					// at every cell shared its cache line with the
					// others' (on 16 cores, most of the output's time).
					b := bufs[k]
					b.Reset()
					errs[k] = nil
					for i := p * piece; i < min(n, (p+1)*piece); i++ {
						if err := line(&b, i); err != nil {
							errs[k] = err
							break
						}
					}
					bufs[k] = b
				}
			}()
		}
		wg.Wait()
		for k := range count {
			if errs[k] != nil {
				return errs[k]
			}
		}
		if err := wait(); err != nil {
			return err
		}
		written = make(chan error, 1)
		go func() {
			for k := range count {
				if _, err := w.Write(bufs[k].Bytes()); err != nil {
					written <- err
					return
				}
			}
			written <- nil
		}()
	}
	return wait()
}

// cellWriter writes the cell of row i of a column, in the JSON or the CSV
// form.
type cellWriter func(b *bytes.Buffer, i int) error

// directCell is the cell writer of a column of int64, int32, uint64 or
// float64 numbers (col, of type dt), in the JSON form when json is set,
// otherwise the CSV form; nil for the other columns. It writes what the
// cell's value would print (cellOf, then value.json or csvField), without
// making the value: the digits are appended to the buffer.
func directCell(col arrow.Array, dt arrow.DataType, json bool) cellWriter {
	null := func(b *bytes.Buffer) {
		if json {
			b.WriteString("null")
		}
	}
	switch a := col.(type) {
	case *array.Int64:
		if dt.ID() != arrow.INT64 {
			return nil
		}
		return func(b *bytes.Buffer, i int) error {
			if a.IsNull(i) {
				null(b)
			} else {
				b.Write(strconv.AppendInt(b.AvailableBuffer(), a.Value(i), 10))
			}
			return nil
		}
	case *array.Int32:
		return func(b *bytes.Buffer, i int) error {
			if a.IsNull(i) {
				null(b)
			} else {
				b.Write(strconv.AppendInt(b.AvailableBuffer(), int64(a.Value(i)), 10))
			}
			return nil
		}
	case *array.Uint64:
		return func(b *bytes.Buffer, i int) error {
			if a.IsNull(i) {
				null(b)
			} else {
				b.Write(strconv.AppendUint(b.AvailableBuffer(), a.Value(i), 10))
			}
			return nil
		}
	case *array.Float64:
		return func(b *bytes.Buffer, i int) error {
			switch f := a.Value(i); {
			case a.IsNull(i):
				null(b)
			case math.IsNaN(f) || math.IsInf(f, 0): // (text: "NaN", "Inf", "-Inf")
				if v := floatValue(f, 64); json {
					b.WriteString(v.json())
				} else {
					b.WriteString(csvField(v))
				}
			default:
				b.Write(appendFloat(b.AvailableBuffer(), f, 64))
			}
			return nil
		}
	}
	return nil
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

// cellOf is the printed value of row i of col, of type dt: the common
// types read directly, the others through their scalars (scalarValue).
func cellOf(col arrow.Array, dt arrow.DataType) func(i int) (value, error) {
	valid := func(i int) bool { return col.IsValid(i) }
	switch a := col.(type) {
	case *array.Int64:
		if dt.ID() == arrow.INT64 {
			return func(i int) (value, error) {
				if !valid(i) {
					return nullValue, nil
				}
				return intValue(a.Value(i)), nil
			}
		}
	case *array.Int32:
		return func(i int) (value, error) {
			if !valid(i) {
				return nullValue, nil
			}
			return intValue(a.Value(i)), nil
		}
	case *array.Uint64:
		return func(i int) (value, error) {
			if !valid(i) {
				return nullValue, nil
			}
			return uintValue(a.Value(i)), nil
		}
	case *array.Float64:
		return func(i int) (value, error) {
			if !valid(i) {
				return nullValue, nil
			}
			return floatValue(a.Value(i), 64), nil
		}
	case *array.String:
		return func(i int) (value, error) {
			if !valid(i) {
				return nullValue, nil
			}
			return textOf(a.Value(i)), nil
		}
	}
	return func(i int) (value, error) {
		s, err := scalar.GetScalar(col, i)
		if err != nil {
			return nullValue, err
		}
		v, err := scalarValue(s, dt)
		if r, ok := s.(interface{ Release() }); ok {
			r.Release()
		}
		return v, err
	}
}
