package dataset

import (
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDictionaryPagesClass: the planner takes a chunk as of dictionary
// pages only when its data pages all hold dictionary indices, as its
// encoding statistics say: not a chunk without a dictionary, nor one whose
// dictionary overflowed into PLAIN pages.
func TestDictionaryPagesClass(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range 20000 {
		b.Field(0).(*array.Int64Builder).Append(int64(i * 7919 % 20011))
	}
	rec := b.NewRecord()
	defer rec.Release()
	with := func(props ...parquet.WriterProperty) []parquet.WriterProperty {
		return append([]parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDataPageSize(4096)}, props...)
	}
	for _, c := range []struct {
		cfg  pqConfig
		dict bool
	}{
		{pqConfig{name: "dictionary", props: with(parquet.WithDictionaryDefault(true))}, true},
		{pqConfig{name: "plain", props: with(parquet.WithDictionaryDefault(false))}, false},
		{pqConfig{name: "fallback", props: with(parquet.WithDictionaryDefault(true), parquet.WithDictionaryPageSizeLimit(8192))}, false},
	} {
		t.Run(c.cfg.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.parquet")
			writePQ(t, path, rec, c.cfg)
			r, err := file.OpenParquetFile(path, false)
			require.NoError(t, err)
			defer r.Close()
			cc, err := r.MetaData().RowGroup(0).ColumnChunk(0)
			require.NoError(t, err)
			require.NotEmpty(t, cc.EncodingStats(), "the writer gives encoding statistics")
			assert.Equal(t, c.dict, dictionaryPages(cc))
			if c.cfg.name == "fallback" {
				assert.True(t, cc.HasDictionaryPage(), "a dictionary, then PLAIN pages")
			}
		})
	}
}
