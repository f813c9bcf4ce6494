package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// readAll reads the record batches of an Arrow IPC file.
func readAll(t *testing.T, path string) []arrow.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f, ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Schema().Equal(schema) {
		t.Fatalf("%s: schema %s", path, r.Schema())
	}
	var out []arrow.Record
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.Record(i)
		if err != nil {
			t.Fatal(err)
		}
		rec.Retain()
		out = append(out, rec)
	}
	return out
}

// The whole file is its two halves, batch for batch, and the same bytes
// whatever the number of goroutines.
func TestWholeAndHalves(t *testing.T) {
	dir := t.TempDir()
	run := func(name string, workers int) []fileStats {
		cfg := config{out: filepath.Join(dir, name+".arrow"), first: filepath.Join(dir, name+"-a.arrow"),
			second: filepath.Join(dir, name+"-b.arrow"), size: 3 << 20, rowsPerBatch: 10_000, seed: 7, workers: workers}
		stats, err := generate(context.Background(), cfg, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return stats
	}
	one, three := run("one", 1), run("three", 3)
	if len(one) != 3 {
		t.Fatalf("%d files", len(one))
	}
	for i := range one {
		a, err := os.ReadFile(one[i].Path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(three[i].Path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s and %s differ", one[i].Path, three[i].Path)
		}
		if int64(len(a)) != one[i].Bytes {
			t.Errorf("%s: %d bytes, reported %d", one[i].Path, len(a), one[i].Bytes)
		}
	}
	if one[0].Bytes < 2<<20 || one[0].Bytes > 4<<20 {
		t.Errorf("asked for 3 MiB, wrote %d bytes", one[0].Bytes)
	}
	whole := readAll(t, one[0].Path)
	halves := append(readAll(t, one[1].Path), readAll(t, one[2].Path)...)
	if len(whole) != len(halves) || len(whole) < 2 {
		t.Fatalf("%d batches in the whole file, %d in the halves", len(whole), len(halves))
	}
	var rows int64
	nulls := make([]int, len(schema.Fields()))
	for i := range whole {
		if !array.RecordEqual(whole[i], halves[i]) {
			t.Errorf("batch %d differs", i)
		}
		rows += whole[i].NumRows()
		for c, col := range whole[i].Columns() {
			nulls[c] += col.NullN()
		}
		whole[i].Release()
		halves[i].Release()
	}
	if rows != one[0].Rows || one[1].Rows+one[2].Rows != rows || one[1].Rows != int64(len(whole)/2)*10_000 {
		t.Errorf("rows: whole %d (read %d), halves %d and %d", one[0].Rows, rows, one[1].Rows, one[2].Rows)
	}
	// i32 has no nulls; the others about 10%, 5% and 4%.
	want := []float64{0, 0.10, 0.05, 0.04}
	for c, n := range nulls {
		if got := float64(n) / float64(rows); got < want[c]*0.8 || got > want[c]*1.2 {
			t.Errorf("column %s: %.3f nulls, want about %.2f", schema.Field(c).Name, got, want[c])
		}
	}
}

// Another seed, other values.
func TestSeed(t *testing.T) {
	a, b := batch(columnKeys(1), 0, 1000), batch(columnKeys(2), 0, 1000)
	defer a.Release()
	defer b.Release()
	for c := range a.Columns() {
		if array.Equal(a.Column(c), b.Column(c)) {
			t.Errorf("column %d is the same for seeds 1 and 2", c)
		}
	}
	// Rows depend on their number, not on the batch they are in.
	whole, part := batch(columnKeys(1), 0, 1000), batch(columnKeys(1), 400, 100)
	defer whole.Release()
	defer part.Release()
	slice := whole.NewSlice(400, 500)
	defer slice.Release()
	if !array.RecordEqual(slice, part) {
		t.Error("rows 400 to 500 differ between batches")
	}
}
