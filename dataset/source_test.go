package dataset

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
)

// renderSources aggregates every column of srcs, rendered.
func renderSources(t *testing.T, mem memory.Allocator, srcs []Source) ([]string, int64) {
	t.Helper()
	d, err := Open(context.Background(), srcs, Options{Mem: mem})
	require.NoError(t, err)
	defer d.Close()
	sel, err := d.Select(nil)
	require.NoError(t, err)
	sum, err := d.Aggregate(context.Background(), newEngine(t, mem), sel, AggregateOptions{Aggs: agg.All})
	require.NoError(t, err)
	out := make([]string, len(sum.Results))
	for i, r := range sum.Results {
		out[i] = render(r)
	}
	return out, sum.Rows
}

// Bytes in memory and the files of an fs.FS are read as files of the disk
// are: the same answers, Parquet, IPC files (not mapped) and streams.
func TestReaderAtAndFS(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	files := map[string][]byte{}
	for _, name := range []string{"sample.parquet", "sample.arrow", "sample.arrows"} {
		b, err := os.ReadFile(filepath.Join(testdata, name))
		require.NoError(t, err)
		files[name] = b
		want, wantRows := aggregateFile(t, mem, []string{filepath.Join(testdata, name)}, Options{}, agg.All)

		src, err := FromReaderAt("mem:"+name, bytes.NewReader(b), int64(len(b)))
		require.NoError(t, err)
		got, rows := renderSources(t, mem, []Source{src})
		assert.Equal(t, want, got, name)
		assert.Equal(t, wantRows.Rows, rows)

		srcs, err := ExpandFS(os.DirFS(testdata), name)
		require.NoError(t, err)
		got, _ = renderSources(t, mem, srcs)
		assert.Equal(t, want, got, name)
	}
	_, err := FromReaderAt("mem:text", bytes.NewReader([]byte("name,value\na,1\n")), 15)
	assert.ErrorIs(t, err, ErrUnknownFormat)
	assert.ErrorContains(t, err, "mem:text: ")

	// A file system of Hive partitions, globbed.
	fsys := fstest.MapFS{
		"data/year=2023/a.parquet": {Data: files["sample.parquet"]},
		"data/year=2024/b.arrow":   {Data: files["sample.arrow"]},
		"data/notes.txt":           {Data: []byte("not data")},
	}
	srcs, err := ExpandFS(fsys, "data")
	require.NoError(t, err)
	require.Len(t, srcs, 2)
	assert.Equal(t, []Partition{{"year", "2024"}}, srcs[1].Partitions)
	d, err := Open(context.Background(), srcs, Options{Mem: mem})
	require.NoError(t, err)
	defer d.Close()
	sel, err := d.Select([]string{"year", "i64"})
	require.NoError(t, err)
	sum, err := d.Aggregate(context.Background(), newEngine(t, mem), sel, AggregateOptions{})
	require.NoError(t, err)
	assert.Equal(t, sum.Rows, sum.Results[0].Count, "every row has a year")
	assert.Equal(t, int64(1800), sum.Rows)
	srcs, err = ExpandFS(fsys, "data/*/*.parquet")
	require.NoError(t, err)
	assert.Len(t, srcs, 1)
	_, err = ExpandFS(fsys, "data/notes.txt")
	assert.ErrorIs(t, err, ErrUnknownFormat)
}
