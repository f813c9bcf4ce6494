package dataset

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/pierrec/lz4/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
)

// corpusDir is where the Arrow and Parquet projects' conformance files lie,
// beside the repository (CI has them there).
const corpusDir = "../../shared/corpus"

// parquetTesting returns the path of a file of parquet-testing's data
// folder, skipping the test where the corpus is missing (failing in CI).
func parquetTesting(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(corpusDir, "parquet-testing", "data", name)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the conformance corpus is missing in CI: %v", err)
		}
		t.Skipf("no conformance corpus: %v", err)
	}
	return p
}

func lz4Block(t *testing.T, src []byte) []byte {
	t.Helper()
	dst := make([]byte, lz4.CompressBlockBound(len(src)))
	var c lz4.Compressor
	n, err := c.CompressBlock(src, dst)
	require.NoError(t, err)
	require.NotZero(t, n)
	return dst[:n]
}

func hadoopFrame(t *testing.T, src []byte) []byte {
	b := lz4Block(t, src)
	out := binary.BigEndian.AppendUint32(nil, uint32(len(src)))
	out = binary.BigEndian.AppendUint32(out, uint32(len(b)))
	return append(out, b...)
}

// The LZ4 codecs decode LZ4_RAW blocks, Hadoop frames (several in a page),
// and, for LZ4, a bare block where the bytes are no Hadoop frames; corrupt
// bytes are an error of decodePage naming the codec, never a crash.
func TestLZ4Codecs(t *testing.T) {
	a := []byte("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaabcdef")
	b := []byte("0123456789012345678901234567890123456789012345678901234567890123456789")
	whole := append(append([]byte{}, a...), b...)
	raw, err := compress.GetCodec(lz4Raw)
	require.NoError(t, err)
	hadoop, err := compress.GetCodec(compress.Codecs.Lz4)
	require.NoError(t, err)

	decode := func(codec compress.Codec, name compress.Compression, src []byte, n int) ([]byte, error) {
		out := make([]byte, n)
		var zd zstdDecoder
		return out, decodePage(codec, name, &zd, out, src, 0)
	}
	got, err := decode(raw, lz4Raw, lz4Block(t, whole), len(whole))
	require.NoError(t, err)
	assert.Equal(t, whole, got)

	frames := append(hadoopFrame(t, a), hadoopFrame(t, b)...)
	got, err = decode(hadoop, compress.Codecs.Lz4, frames, len(whole))
	require.NoError(t, err)
	assert.Equal(t, whole, got, "two Hadoop frames")

	got, err = decode(hadoop, compress.Codecs.Lz4, lz4Block(t, whole), len(whole))
	require.NoError(t, err)
	assert.Equal(t, whole, got, "a bare block (older parquet-cpp)")

	_, err = decode(raw, lz4Raw, frames, len(whole))
	assert.ErrorContains(t, err, "corrupt LZ4_RAW page", "Hadoop frames are no LZ4_RAW block")

	bad := lz4Block(t, whole)
	_, err = decode(hadoop, compress.Codecs.Lz4, bad[:len(bad)-4], len(whole))
	assert.ErrorContains(t, err, "corrupt LZ4 page", "a block cut short")

	_, err = decode(raw, lz4Raw, lz4Block(t, whole), len(whole)+5)
	assert.ErrorContains(t, err, "decompresses to")

	got, err = decode(raw, lz4Raw, nil, 0)
	require.NoError(t, err)
	assert.Empty(t, got)
}

// The guard bounds what an LZ4 page says it holds by LZ4's largest ratio.
func TestLZ4GuardRatio(t *testing.T) {
	var g pageGuard
	for _, codec := range []compress.Compression{lz4Raw, compress.Codecs.Lz4} {
		c := &guardChunk{codec: codec}
		assert.NoError(t, g.checkCodec(c, 0, 10, 10*lz4MaxRatio), codec)
		assert.ErrorContains(t, g.checkCodec(c, 0, 10, 1<<20), "said to hold", codec)
	}
}

// parquet-testing's LZ4 files (LZ4_RAW, Hadoop-framed LZ4, and the bare
// LZ4 blocks of older parquet-cpp) read as their README describes, on the
// page path and through pqarrow.
func TestLZ4CorpusFiles(t *testing.T) {
	small := []string{
		"c0 int64 count=4 nulls=0 sum=6374419202 exact=6374419202 min=1593604800 max=1593604801 mean=1.5936048005e+09 first=- last=- argmin=- argmax=-",
		"c1 binary count=4 nulls=0 sum=- exact=<nil> min=abc max=def mean=- first=- last=- argmin=- argmax=-",
		"v11 float64 count=4 nulls=0 sum=99.525 exact=<nil> min=7.7 max=42.125 mean=24.88125 first=- last=- argmin=- argmax=-",
	}
	for _, name := range []string{"lz4_raw_compressed.parquet", "hadoop_lz4_compressed.parquet", "non_hadoop_lz4_compressed.parquet"} {
		for _, arrowDecode := range []bool{false, true} {
			got, _ := aggregateFile(t, memory.DefaultAllocator, []string{parquetTesting(t, name)}, Options{ArrowDecode: arrowDecode}, agg.Default)
			assert.Equal(t, small, got, "%s (arrow decode %v)", name, arrowDecode)
		}
	}
	for _, name := range []string{"lz4_raw_compressed_larger.parquet", "hadoop_lz4_compressed_larger.parquet"} {
		got, sum := aggregateFile(t, memory.DefaultAllocator, []string{parquetTesting(t, name)}, Options{}, agg.Default)
		require.Len(t, got, 1)
		assert.EqualValues(t, 10000, sum.Rows, name)
		assert.EqualValues(t, 10000, sum.Results[0].Count, name)
		assert.Contains(t, got[0], "min=00087de7-10df-4979-94cf-79279f9745ce max=ffffe6a0-e0c0-4e65-a9d4-f7f4c176aea2", name)
	}
}
