package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outputRecord is a record of every kind of column a grouped result has,
// nullable or not, with nulls, of n rows.
func outputRecord(mem memory.Allocator, n int) arrow.Record {
	md := arrow.NewMetadata([]string{"by"}, []string{"arrowagg"})
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.BinaryTypes.String},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "d", Type: &arrow.Decimal128Type{Precision: 38, Scale: 2}, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "t", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true},
		{Name: "w", Type: arrow.BinaryTypes.String, Nullable: true},
	}, &md)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.StringBuilder).Append("key" + string(rune('a'+i%26)) + string(rune('0'+i%10)) + string(rune('A'+i/260%26)))
		b.Field(1).(*array.Int64Builder).Append(int64(i) * 7)
		for c := 2; c < 7; c++ {
			if (i+c)%5 == 0 {
				b.Field(c).AppendNull()
				continue
			}
			switch c {
			case 2:
				b.Field(c).(*array.Float64Builder).Append(float64(i) / 3)
			case 3:
				b.Field(c).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i) * -1001))
			case 4:
				b.Field(c).(*array.BooleanBuilder).Append(i%3 == 0)
			case 5:
				b.Field(c).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i) * 1e9))
			case 6:
				b.Field(c).(*array.StringBuilder).Append(string(rune('a' + i%7)))
			}
		}
	}
	return b.NewRecord()
}

// readParquet reads a Parquet file back into a table, and returns its row
// groups' sizes and its key-value metadata's keys.
func readParquet(t *testing.T, mem memory.Allocator, data []byte) (arrow.Table, []int64, []string) {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	require.NoError(t, err)
	defer pf.Close()
	var groups []int64
	for i := range pf.NumRowGroups() {
		groups = append(groups, pf.RowGroup(i).NumRows())
	}
	keys := pf.MetaData().KeyValueMetadata().Keys()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, mem)
	require.NoError(t, err)
	tbl, err := fr.ReadTable(context.Background())
	require.NoError(t, err)
	return tbl, groups, keys
}

// TestWriteParquet: --output's Parquet writer gives back the record and its
// nulls, in row groups of the size asked, on one goroutine or several; the
// schema read back, and the file's metadata, are those of pqarrow's own
// writer.
func TestWriteParquet(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, tc := range []struct {
		rows    int
		group   int64
		threads int
		want    []int64
	}{
		{rows: 1000, group: 300, threads: 3, want: []int64{300, 300, 300, 100}},
		{rows: 1000, group: 1000, threads: 1, want: []int64{1000}},
		{rows: 999, group: 1 << 20, threads: 8, want: []int64{999}},
		{rows: 0, group: 300, threads: 2, want: []int64{0}},
	} {
		rec := outputRecord(mem, tc.rows)
		var buf bytes.Buffer
		require.NoError(t, writeParquet(&buf, rec, tc.group, tc.threads))
		tbl, groups, keys := readParquet(t, mem, buf.Bytes())
		assert.Equal(t, tc.want, groups, "rows %d", tc.rows)
		var ref bytes.Buffer
		fw, err := pqarrow.NewFileWriter(rec.Schema(), &ref, nil, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		require.NoError(t, err)
		require.NoError(t, fw.Write(rec))
		require.NoError(t, fw.Close())
		refTbl, _, refKeys := readParquet(t, mem, ref.Bytes())
		assert.True(t, refTbl.Schema().Equal(tbl.Schema()), "schema %s, want %s", tbl.Schema(), refTbl.Schema())
		assert.Equal(t, refKeys, keys)
		assert.Equal(t, []string{"by", "ARROW:schema"}, keys)
		require.EqualValues(t, rec.NumCols(), tbl.NumCols())
		for i, col := range rec.Columns() {
			want := arrow.NewChunked(col.DataType(), []arrow.Array{col})
			assert.True(t, array.ChunkedEqual(want, tbl.Column(i).Data()), "column %s, rows %d, row groups of %d",
				rec.ColumnName(i), tc.rows, tc.group)
			want.Release()
		}
		refTbl.Release()
		tbl.Release()
		rec.Release()
	}
}

// TestWriteParquetRefuses: a null in a column its schema says has none is
// an error naming the column, not a file that says otherwise; so is a
// nested column (a grouped result has none).
func TestWriteParquetRefuses(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.AppendValues([]int64{1, 2}, []bool{true, false})
	arr := b.NewArray()
	defer arr.Release()
	rec := array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{arr}, 2)
	defer rec.Release()
	err := writeParquet(&bytes.Buffer{}, rec, 100, 2)
	require.ErrorContains(t, err, `column "n": 1 nulls in a column that is not nullable`)

	st := array.NewStructBuilder(mem, arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64}))
	defer st.Release()
	st.Append(true)
	st.FieldBuilder(0).(*array.Int64Builder).Append(1)
	sarr := st.NewArray()
	defer sarr.Release()
	srec := array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "s", Type: sarr.DataType()}}, nil), []arrow.Array{sarr}, 1)
	defer srec.Release()
	err = writeParquet(&bytes.Buffer{}, srec, 100, 2)
	require.ErrorContains(t, err, `column "s": writing struct<x: int64> columns is unsupported`)
}
