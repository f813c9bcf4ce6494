package dataset

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
)

// An empty data page v2 (one null: its levels, and no compressed bytes
// although the page says it is compressed) reads as its null, on the page
// path and through pqarrow, as Arrow C++ reads it.
func TestEmptyDataPageV2(t *testing.T) {
	path := parquetTesting(t, "datapage_v2_empty_datapage.snappy.parquet")
	for _, arrowDecode := range []bool{false, true} {
		got, sum := aggregateFile(t, memory.DefaultAllocator, []string{path}, Options{ArrowDecode: arrowDecode}, agg.Default)
		assert.EqualValues(t, 1, sum.Rows)
		assert.Equal(t, []string{"value float32 count=0 nulls=1 sum=null exact=<nil> min=null max=null mean=null first=- last=- argmin=- argmax=-"}, got, "arrow decode %v", arrowDecode)
	}
	// page_v2_empty_compressed: nulls whose empty values are a zstd frame
	got, _ := aggregateFile(t, memory.DefaultAllocator, []string{parquetTesting(t, "page_v2_empty_compressed.parquet")}, Options{}, agg.Default)
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "count=0 nulls=10")
}

// No bytes decompress to none with every codec; a page of no bytes said to
// hold some is still refused.
func TestEmptyPagesDecompress(t *testing.T) {
	var g pageGuard
	for _, name := range []compress.Compression{compress.Codecs.Snappy, compress.Codecs.Gzip, compress.Codecs.Brotli, compress.Codecs.Zstd, compress.Codecs.Lz4, lz4Raw} {
		codec, err := compress.GetCodec(name)
		require.NoError(t, err)
		assert.Empty(t, codec.Decode([]byte{}, nil), name)
		var zd zstdDecoder
		out := []byte{7, 7}
		require.NoError(t, decodePage(codec, name, &zd, out, []byte{1, 2}, 2), name)
		assert.Equal(t, []byte{1, 2}, out, "the levels of a data page v2")
		assert.NoError(t, g.checkCodec(&guardChunk{codec: name}, 0, 0, 0), name)
	}
	assert.Error(t, g.checkCodec(&guardChunk{codec: compress.Codecs.Gzip}, 0, 0, 10))
}
