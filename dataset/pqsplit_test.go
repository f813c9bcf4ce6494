package dataset

import (
	"bytes"
	"context"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/engine"
)

// byteStreams gathers a window of values from the split streams, window
// after window, and refuses to read past the page's values.
func TestByteStreamsRead(t *testing.T) {
	// three values of 4 bytes: 0x04030201, 0x14131211, 0x24232221
	bs := byteStreams{b: []byte{1, 0x11, 0x21, 2, 0x12, 0x22, 3, 0x13, 0x23, 4, 0x14, 0x24}, n: 3}
	out := make([]byte, 8)
	require.NoError(t, bs.read(out, 4))
	assert.Equal(t, []byte{1, 2, 3, 4, 0x11, 0x12, 0x13, 0x14}, out)
	require.NoError(t, bs.read(out[:4], 4))
	assert.Equal(t, []byte{0x21, 0x22, 0x23, 0x24}, out[:4])
	assert.ErrorContains(t, bs.read(out[:4], 4), "0 BYTE_STREAM_SPLIT values left for 1 values")
}

// parquet-testing's BYTE_STREAM_SPLIT files: each column of the extended
// file gives what its PLAIN twin gives (FLOAT, DOUBLE, INT32, INT64), with
// and without the ordered aggregates; the zstd file's normals are read
// (300 of each).
func TestByteStreamSplitCorpusFiles(t *testing.T) {
	path := parquetTesting(t, "byte_stream_split_extended.gzip.parquet")
	for _, set := range []agg.Set{agg.Default, agg.All} {
		got, sum := aggregateFile(t, memory.DefaultAllocator, []string{path}, Options{}, set)
		byName := map[string]string{}
		for i, r := range sum.Results {
			byName[r.Name] = strings.TrimPrefix(got[i], r.Name)
		}
		for _, typ := range []string{"float", "double", "int32", "int64"} {
			plain, split := byName[typ+"_plain"], byName[typ+"_byte_stream_split"]
			require.NotEmpty(t, plain, typ)
			assert.Contains(t, plain, "count=200")
			assert.Equal(t, plain, split, typ)
		}
	}
	got, _ := aggregateFile(t, memory.DefaultAllocator, []string{parquetTesting(t, "byte_stream_split.zstd.parquet")}, Options{}, agg.Default)
	require.Len(t, got, 2)
	assert.Contains(t, got[0], "f32 float32 count=300 nulls=0 sum=8.258872919715941")
	assert.Contains(t, got[1], "f64 float64 count=300 nulls=0 sum=-41.22919022747558")
}

// splitPage is a data page v1 of 8 rows (rows 1 and 4 null: RLE
// definition levels of one bit) whose 6 values of width bytes each are
// BYTE_STREAM_SPLIT-encoded from their PLAIN bytes plain.
func splitPage(plain []byte, width int) []byte {
	n := len(plain) / width
	body := []byte{2, 0, 0, 0, 3, 0xED} // 2 bytes of levels: a bit-packed group of 8: 1,0,1,1,0,1,1,1
	for b := 0; b < width; b++ {
		for i := 0; i < n; i++ {
			body = append(body, plain[i*width+b])
		}
	}
	h := pageHeader{typ: pageTypeData, hasData: true, numValues: 8, encoding: int32(encByteStreamSplit),
		defEncoding: int32(parquet.Encodings.RLE), hasType: true, uncompressed: int32(len(body)), hasUncompressed: true,
		compressed: int32(len(body)), hasCompressed: true}
	return append(encodeHeader(h), body...)
}

// A BYTE_STREAM_SPLIT page with nulls, of FIXED_LEN_BYTE_ARRAY decimals
// (widened to Decimal128) and of an Opaque type (counted), through the page
// path with and without the ordered aggregates (values spread at their rows).
func TestByteStreamSplitPageWithNulls(t *testing.T) {
	// 3-byte big-endian decimals: 1, -2, 300, -70000, 5, 1000000
	vals := []int64{1, -2, 300, -70000, 5, 1000000}
	var plain []byte
	for _, v := range vals {
		plain = append(plain, byte(v>>16), byte(v>>8), byte(v))
	}
	data := splitPage(plain, 3)
	eng, err := engine.New(engine.WithDevice(engine.DeviceCPU), engine.WithThreads(1))
	require.NoError(t, err)
	defer eng.Close()
	dec := &arrow.Decimal128Type{Precision: 7, Scale: 0}
	for _, ordered := range []bool{false, true} {
		gc := guardChunk{f: bytes.NewReader(data), end: int64(len(data)), values: 8, codec: compress.Codecs.Uncompressed,
			phys: parquet.Types.FixedLenByteArray, typeLen: 3, maxDef: 1}
		l := pageLeaf{typ: dec, kind: column.Decimal128, maxDef: 1, flba: 3}
		res, err := (&pageScratch{}).aggregateChunk(context.Background(), eng, &pageGuard{}, &gc, &l, 8, ordered)
		require.NoError(t, err)
		set := agg.Default
		if ordered {
			set = agg.All
		}
		f := res.state.Finalize(set)
		assert.EqualValues(t, 6, f.Count)
		assert.EqualValues(t, 2, f.NullCount)
		assert.Equal(t, "930304", f.Sum.String())
		assert.Equal(t, int64(-70000), int64(f.Min.Bits[0]))
		assert.Equal(t, ^uint64(0), f.Min.Bits[1], "sign-extended")
		assert.EqualValues(t, 1000000, f.Max.Bits[0])
		if ordered {
			assert.EqualValues(t, 0, f.FirstRow)
			assert.EqualValues(t, 1, f.First.Bits[0])
			assert.EqualValues(t, 7, f.LastRow)
			assert.EqualValues(t, 1000000, f.Last.Bits[0])
			assert.EqualValues(t, 5, f.ArgMin, "the row of -70000")
		}

		gc.f = bytes.NewReader(data)
		l = pageLeaf{typ: &arrow.FixedSizeBinaryType{ByteWidth: 3}, kind: column.Opaque, maxDef: 1}
		res, err = (&pageScratch{}).aggregateChunk(context.Background(), eng, &pageGuard{}, &gc, &l, 8, ordered)
		require.NoError(t, err)
		f = res.state.Finalize(agg.Count | agg.NullCount)
		assert.EqualValues(t, 6, f.Count)
		assert.EqualValues(t, 2, f.NullCount)
	}
}

// Decimals of 1 to 16 big-endian bytes widen to Decimal128, sign-extended.
func TestWidenDecimals(t *testing.T) {
	out := make([]byte, 32)
	widenDecimals(out, []byte{0xff, 0x7f}, 1, 2)
	assert.Equal(t, ^uint64(0), binary.LittleEndian.Uint64(out))
	assert.Equal(t, ^uint64(0), binary.LittleEndian.Uint64(out[8:]))
	assert.EqualValues(t, 127, binary.LittleEndian.Uint64(out[16:]))
	assert.Zero(t, binary.LittleEndian.Uint64(out[24:]))
	src := bytes.Repeat([]byte{0x80}, 16)
	widenDecimals(out, src, 16, 1)
	assert.Equal(t, uint64(0x8080808080808080), binary.LittleEndian.Uint64(out[8:]))
}

// A BYTE_STREAM_SPLIT page in a chunk that arrow-go's decoders would read
// is refused by the guard, saying so (arrow-go v17 reads no rows of it and
// says nothing).
func TestGuardRefusesSplitPagesForArrowGo(t *testing.T) {
	data := splitPage(make([]byte, 18), 3)
	gc := guardChunk{f: bytes.NewReader(data), end: int64(len(data)), values: 8, codec: compress.Codecs.Uncompressed,
		phys: parquet.Types.FixedLenByteArray, typeLen: 3, maxDef: 1, decoded: true}
	_, err := (&pageGuard{}).check(context.Background(), &gc)
	require.ErrorIs(t, err, arrow.ErrNotImplemented)
	assert.ErrorContains(t, err, "page 0: not implemented: BYTE_STREAM_SPLIT encoding of a FIXED_LEN_BYTE_ARRAY column read through arrow-go")
	gc.decoded, gc.f = false, bytes.NewReader(data)
	_, err = (&pageGuard{}).check(context.Background(), &gc)
	assert.NoError(t, err, "the page path decodes it")
}

// Decimals stored as little-endian INT32 or INT64 widen to Decimal128,
// sign-extended.
func TestWidenIntDecimals(t *testing.T) {
	out := make([]byte, 32)
	l := pageLeaf{flba: 4, le: true}
	src := binary.LittleEndian.AppendUint32(nil, uint32(0xfffffffe)) // -2
	src = binary.LittleEndian.AppendUint32(src, 0x7fffffff)
	l.widen(out, src, 2)
	assert.Equal(t, ^uint64(1), binary.LittleEndian.Uint64(out))
	assert.Equal(t, ^uint64(0), binary.LittleEndian.Uint64(out[8:]))
	assert.EqualValues(t, 0x7fffffff, binary.LittleEndian.Uint64(out[16:]))
	assert.Zero(t, binary.LittleEndian.Uint64(out[24:]))
	l = pageLeaf{flba: 8, le: true}
	l.widen(out, binary.LittleEndian.AppendUint64(nil, 1<<63), 1) // the least int64
	assert.Equal(t, uint64(1<<63), binary.LittleEndian.Uint64(out))
	assert.Equal(t, ^uint64(0), binary.LittleEndian.Uint64(out[8:]))
}

// A data page in an encoding that arrow-go v17 has no decoder for in a
// column of its physical type is refused by the guard as not implemented
// (arrow-go's decoder would panic, which reads as corrupt data).
func TestGuardRefusesEncodingsArrowGoCannotDecode(t *testing.T) {
	for _, c := range []struct {
		phys parquet.Type
		enc  parquet.Encoding
	}{
		{parquet.Types.FixedLenByteArray, parquet.Encodings.DeltaByteArray}, // parquet-go writes it
		{parquet.Types.FixedLenByteArray, parquet.Encodings.DeltaLengthByteArray},
		{parquet.Types.Double, parquet.Encodings.DeltaBinaryPacked},
		{parquet.Types.Int32, parquet.Encodings.RLE},
		{parquet.Types.Boolean, parquet.Encodings.RLEDict},
	} {
		body := make([]byte, 8)
		h := pageHeader{typ: pageTypeData, hasData: true, numValues: 8, encoding: int32(c.enc),
			defEncoding: int32(parquet.Encodings.RLE), hasType: true, uncompressed: int32(len(body)), hasUncompressed: true,
			compressed: int32(len(body)), hasCompressed: true}
		data := append(encodeHeader(h), body...)
		gc := guardChunk{f: bytes.NewReader(data), end: int64(len(data)), values: 8, codec: compress.Codecs.Uncompressed,
			phys: c.phys, typeLen: 3, maxDef: 1, decoded: true}
		_, err := (&pageGuard{}).check(context.Background(), &gc)
		require.ErrorIs(t, err, arrow.ErrNotImplemented, "%s of %s", c.enc, c.phys)
		assert.ErrorContains(t, err, "page 0: not implemented: "+c.enc.String()+" encoding of a "+c.phys.String()+" column (arrow-go v17 has no decoder for it)")
	}
}
