package dataset

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/report"
)

// dictKeyFile writes a Parquet file of 4 row groups of 1000 rows: string,
// large_string, binary, int64 and date32 keys s, ls, b, i and day, and
// int64 values x. Row group 0
// holds 50 words, 1 only nulls, 2 distinct strings (past the dictionary's
// size limit: PLAIN pages after the first), 3 the words with nulls; pages
// of v2 when v2. It returns the file's path and its rows as a record.
func dictKeyFile(t *testing.T, mem memory.Allocator, v2 bool) (string, arrow.Record) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ls", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	}, nil)
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	s, ls := rb.Field(0).(*array.StringBuilder), rb.Field(1).(*array.LargeStringBuilder)
	b, x := rb.Field(2).(*array.BinaryBuilder), rb.Field(3).(*array.Int64Builder)
	ik, day := rb.Field(4).(*array.Int64Builder), rb.Field(5).(*array.Date32Builder)
	for i := range 4000 {
		var v string
		null := false
		switch rg := i / 1000; {
		case rg == 1:
			null = true
		case rg == 2:
			v = fmt.Sprintf("distinct string %06d", i)
		case rg == 3 && i%11 == 0:
			null = true
		default:
			v = fmt.Sprintf("word%02d", (i*7)%50)
		}
		if null {
			s.AppendNull()
			ls.AppendNull()
			b.AppendNull()
			ik.AppendNull()
			day.AppendNull()
		} else {
			s.Append(v)
			ls.Append(v)
			b.Append([]byte(v[len(v)-3:])) // (fewer values: another grouping)
			var h int64
			for _, c := range []byte(v) {
				h = 31*h + int64(c)
			}
			ik.Append(h - 1<<40) // (one per string)
			day.Append(arrow.Date32(h % 20000))
		}
		if i%13 == 0 {
			x.AppendNull()
		} else {
			x.Append(int64(i*i) - 5000)
		}
	}
	rec := rb.NewRecord()
	version := parquet.DataPageV1
	if v2 {
		version = parquet.DataPageV2
	}
	path := filepath.Join(t.TempDir(), "keys.parquet")
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(1000),
		parquet.WithDataPageSize(512), parquet.WithBatchSize(64), parquet.WithDictionaryPageSizeLimit(4096), parquet.WithDataPageVersion(version),
		parquet.WithCompression(compress.Codecs.Snappy)), pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	return path, rec
}

// String, binary and integer keys are decoded from their pages as
// dictionary indices where every data page of a chunk is
// dictionary-encoded, and as values (through pqarrow for strings and
// binaries) where one is not (a dictionary past its size limit): the
// groups are those of the rows in memory and those of pqarrow's arrays
// (Options.ArrowDecode), to the last bit, for data pages v1 and v2, null
// keys and a chunk of nulls only.
func TestGroupDictKeyPages(t *testing.T) {
	for _, v2 := range []bool{false, true} {
		for _, keys := range [][]string{{"s"}, {"ls"}, {"b", "s"}, {"i"}, {"day", "b"}} {
			t.Run(fmt.Sprintf("v2=%v/%v", v2, keys), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				ctx := context.Background()
				path, rec := dictKeyFile(t, mem, v2)
				defer rec.Release()
				req := engine.GroupRequest{Keys: keys, Columns: []string{"x"}, Aggs: agg.Default | agg.Ordered, CountRows: true}
				eng := newEngine(t, mem)

				// The routes the chunks of s and i take: dictionary indices
				// but in row group 2.
				if keys[0] == "s" {
					assert.Equal(t, []bool{false, false, true, false}, dictKeyUndict(t, path, 0))
				}
				if keys[0] == "i" {
					assert.Equal(t, []bool{false, false, true, false}, dictKeyUndict(t, path, 4))
				}

				g, err := eng.NewGrouper(rec.Schema(), req)
				require.NoError(t, err)
				require.NoError(t, g.Add(ctx, rec))
				want, err := g.Result(mem)
				require.NoError(t, err)
				defer want.Release()
				require.Greater(t, want.NumRows(), int64(50))
				var wantJSON bytes.Buffer
				require.NoError(t, report.WriteGroups(&wantJSON, report.JSON, report.Groups{Rows: 4000, Files: 1, Kept: 4000, Record: want}))

				for _, arrowDecode := range []bool{false, true} {
					srcs, err := Expand([]string{path})
					require.NoError(t, err)
					d, err := Open(ctx, srcs, Options{Mem: mem, ArrowDecode: arrowDecode})
					require.NoError(t, err)
					sum, err := d.Group(ctx, eng, req)
					require.NoError(t, err)
					var gotJSON bytes.Buffer
					require.NoError(t, report.WriteGroups(&gotJSON, report.JSON, report.Groups{Rows: sum.Rows, Files: sum.Files, Kept: sum.Kept, Record: sum.Groups}))
					assert.Equal(t, wantJSON.String(), gotJSON.String(), "ArrowDecode %v", arrowDecode)
					sum.Groups.Release()
					require.NoError(t, d.Close())
				}
			})
		}
	}
}

// dictKeyUndict walks the chunks of Parquet leaf column col of the file at
// path, and returns per row group whether a data page of it is not
// dictionary-encoded (chunkWalk.undict: pqarrow decodes that chunk).
func dictKeyUndict(t *testing.T, path string, col int) []bool {
	t.Helper()
	var out []bool
	for _, w := range walkChunks(t, path, col) {
		out = append(out, w.undict)
	}
	return out
}

// walkedChunk is what the page guard's walk of a column chunk found: its
// data pages' first rows, and whether one is not dictionary-encoded.
type walkedChunk struct {
	starts []int64
	undict bool
}

// walkChunks walks the chunks of Parquet leaf column col of the file at
// path, one per row group.
func walkChunks(t testing.TB, path string, col int) []walkedChunk {
	t.Helper()
	ctx := context.Background()
	srcs, err := Expand([]string{path})
	require.NoError(t, err)
	d, err := Open(ctx, srcs, Options{})
	require.NoError(t, err)
	defer d.Close()
	pqf := d.files[0].parquet
	require.NotNil(t, pqf)
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	r := &parquetRun{pqf: pqf}
	var out []walkedChunk
	for rg := range pqf.meta.RowGroups {
		cc, err := pqf.meta.RowGroup(rg).ColumnChunk(col)
		require.NoError(t, err)
		c, ok, err := r.guardChunkOf(f, st.Size(), cc, col, false)
		require.NoError(t, err)
		require.True(t, ok)
		g := pageGuard{recordStarts: true}
		_, err = g.check(ctx, &c)
		require.NoError(t, err)
		out = append(out, walkedChunk{starts: append([]int64(nil), g.starts...), undict: g.walk.undict})
	}
	return out
}

// A string key's chunk whose pages are all dictionary-encoded is walked
// without its indices (pageIndices), which the page path checks as it
// decodes them: indices of a bit width past 32 there are the page path's
// error (the walk's is "dictionary indices of 64 bits").
func TestGroupDictKeyCorruptIndices(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "x", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	for i := range 500 {
		rb.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("word%02d", i%20))
		rb.Field(1).(*array.Int64Builder).Append(int64(i))
	}
	rec := rb.NewRecord()
	defer rec.Release()
	dir := t.TempDir()
	path := filepath.Join(dir, "keys.parquet")
	writePQ(t, path, rec, pqConfig{props: []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Uncompressed),
		parquet.WithDictionaryDefault(true)}})
	req := engine.GroupRequest{Keys: []string{"s"}, Columns: []string{"x"}, Aggs: agg.Default, CountRows: true}
	eng := newEngine(t, mem)
	group := func(path string) error {
		srcs, err := Expand([]string{path})
		require.NoError(t, err)
		d, err := Open(ctx, srcs, Options{Mem: mem})
		require.NoError(t, err)
		defer d.Close()
		sum, err := d.Group(ctx, eng, req)
		if err == nil {
			require.Equal(t, int64(20), sum.Groups.NumRows())
			sum.Groups.Release()
		}
		return err
	}
	require.NoError(t, group(path))
	require.Equal(t, []bool{false}, dictKeyUndict(t, path, 0))
	bad := filepath.Join(dir, "bad.parquet")
	require.NoError(t, os.WriteFile(bad, corruptDictWidth(t, path, 0, 64), 0o644))
	assert.ErrorContains(t, group(bad), `column "s": page 1: dictionary indices: bit width 64 not in [0, 32]`)
}
