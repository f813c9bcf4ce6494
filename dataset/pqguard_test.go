package dataset

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/engine"
)

// guardCols are columns read through pqarrow whose pages make arrow-go's
// decoders allocate from their contents: strings and binaries, nested or
// not, dictionary-encoded or not, and fixed-size binaries.
func guardCols() []pqCol {
	nested := arrow.StructOf(
		arrow.Field{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: false},
	)
	return []pqCol{
		genCol("label", arrow.BinaryTypes.String, true, 0.1, false, func(r *rand.Rand) string { return fmt.Sprint(r.IntN(300)) }),
		genCol("blob", arrow.BinaryTypes.Binary, true, 0.2, false, func(r *rand.Rand) []byte { return bytes.Repeat([]byte{byte(r.Uint32())}, r.IntN(40)) }),
		genCol("fixed", &arrow.FixedSizeBinaryType{ByteWidth: 3}, true, 0.1, false, func(r *rand.Rand) []byte { return []byte{byte(r.IntN(4)), 1, 2} }),
		{field: arrow.Field{Name: "rec", Type: nested, Nullable: true}, nulls: 0.1, fill: func(b array.Builder, r *rand.Rand) {
			sb := b.(*array.StructBuilder)
			sb.Append(true)
			if r.IntN(4) == 0 {
				sb.FieldBuilder(0).AppendNull()
			} else {
				sb.FieldBuilder(0).(*array.StringBuilder).Append(fmt.Sprint("k", r.IntN(50)))
			}
			sb.FieldBuilder(1).(*array.Int64Builder).Append(r.Int64N(1000))
		}},
	}
}

// guardConfigs add to pqConfigs the encodings and codecs of the guard's
// checks that those leave out.
func guardConfigs() []pqConfig {
	small := []parquet.WriterProperty{parquet.WithMaxRowGroupLength(700), parquet.WithDataPageSize(1 << 10), parquet.WithBatchSize(128)}
	with := func(p ...parquet.WriterProperty) []parquet.WriterProperty {
		return append(append([]parquet.WriterProperty(nil), small...), p...)
	}
	return append(pqConfigs(),
		pqConfig{name: "v1-brotli-dict", props: with(parquet.WithCompression(compress.Codecs.Brotli), parquet.WithDictionaryDefault(true))},
		pqConfig{name: "v2-delta-strings", props: with(parquet.WithDictionaryDefault(false), parquet.WithDataPageVersion(parquet.DataPageV2),
			parquet.WithCompression(compress.Codecs.Zstd),
			parquet.WithEncodingFor("label", parquet.Encodings.DeltaByteArray), parquet.WithEncodingFor("blob", parquet.Encodings.DeltaLengthByteArray),
			parquet.WithEncodingFor("rec.s", parquet.Encodings.DeltaByteArray), parquet.WithEncodingFor("rec.n", parquet.Encodings.DeltaBinaryPacked),
			parquet.WithEncodingFor("i32", parquet.Encodings.DeltaBinaryPacked)),
			leaks: "arrow-go v17's DELTA_BINARY_PACKED decoder never frees its miniblock bit widths"},
	)
}

// writeGuardFile writes the columns of the page path's tests and guardCols
// in configuration cfg.
func writeGuardFile(t *testing.T, dir string, cfg pqConfig, seed uint64) string {
	t.Helper()
	rec := pqRecord(memory.DefaultAllocator, append(pqCols(), guardCols()...), 2000, seed)
	defer rec.Release()
	path := filepath.Join(dir, cfg.name+".parquet")
	writePQ(t, path, rec, cfg)
	return path
}

// guardFile checks every column chunk of a file with the guard, as chunks
// read through arrow-go's decoders (the strictest checks).
func guardFile(t *testing.T, path string) error {
	t.Helper()
	_, pqf, err := probeParquet(pathSource(t, path))
	require.NoError(t, err)
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	fi, err := f.Stat()
	require.NoError(t, err)
	r := &parquetRun{pqf: pqf, decodeBytes: DefaultDecodeBytes}
	var g pageGuard
	for rg := range pqf.meta.RowGroups {
		for col := 0; col < pqf.meta.Schema.NumColumns(); col++ {
			cc, err := pqf.meta.RowGroup(rg).ColumnChunk(col)
			require.NoError(t, err)
			if _, err := r.guard(context.Background(), &g, f, fi.Size(), cc, col, true); err != nil {
				return fmt.Errorf("row group %d, column %d: %w", rg, col, err)
			}
		}
	}
	return nil
}

// The guard reads page headers as arrow-go does, and accepts every page of
// healthy files: every page type, encoding and codec arrow-go writes.
func TestPageGuardAcceptsHealthyFiles(t *testing.T) {
	dir := t.TempDir()
	for ci, cfg := range guardConfigs() {
		t.Run(cfg.name, func(t *testing.T) {
			path := writeGuardFile(t, dir, cfg, uint64(ci))
			require.NoError(t, guardFile(t, path))

			// The headers, as the guard decodes them, are those arrow-go's
			// page reader returns.
			pf, err := file.OpenParquetFile(path, false)
			require.NoError(t, err)
			defer pf.Close()
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			for col := 0; col < pf.MetaData().Schema.NumColumns(); col++ {
				cc, err := pf.MetaData().RowGroup(0).ColumnChunk(col)
				require.NoError(t, err)
				off, n, err := chunkRange(pf.MetaData(), cc, int64(len(data)))
				require.NoError(t, err)
				pr, err := pf.RowGroup(0).GetColumnPageReader(col)
				require.NoError(t, err)
				pos := off
				for pr.Next() {
					h, k, err := parsePageHeader(data[pos : off+n])
					require.NoError(t, err)
					p := pr.Page()
					assert.Equal(t, p.NumValues(), h.numValues)
					assert.Equal(t, int32(p.Encoding()), h.encoding)
					switch p := p.(type) {
					case *file.DictionaryPage:
						assert.Equal(t, int32(pageTypeDict), h.typ)
					case *file.DataPageV1:
						assert.Equal(t, int32(pageTypeData), h.typ)
						assert.Equal(t, p.UncompressedSize(), h.uncompressed)
					case *file.DataPageV2:
						assert.Equal(t, int32(pageTypeDataV2), h.typ)
						assert.Equal(t, p.DefinitionLevelByteLen(), h.defBytes)
						assert.Equal(t, p.IsCompressed(), h.isCompressed)
					}
					pos += int64(k) + int64(h.compressed)
				}
				require.NoError(t, pr.Err())
			}
		})
	}
}

// compactWriter writes the thrift compact protocol (what page headers are).
type compactWriter struct {
	b    []byte
	last []int16 // the last field id of each open struct
}

func (w *compactWriter) varint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }

func (w *compactWriter) field(id int16, typ byte) {
	last := &w.last[len(w.last)-1]
	if d := id - *last; d > 0 && d < 16 {
		w.b = append(w.b, byte(d)<<4|typ)
	} else {
		w.b = append(w.b, typ)
		w.varint(uint64(uint32(int32(id)<<1) ^ uint32(int32(id)>>31)))
	}
	*last = id
}

func (w *compactWriter) i32(id int16, v int32) {
	w.field(id, ctI32)
	w.varint(uint64(uint32(v<<1) ^ uint32(v>>31)))
}

func (w *compactWriter) i64(id int16, v int64) {
	w.field(id, ctI64)
	w.varint(uint64(v<<1 ^ v>>63))
}

// listHeader writes the header of a list of n values of type typ.
func (w *compactWriter) listHeader(n int, typ byte) {
	if n < 15 {
		w.b = append(w.b, byte(n)<<4|typ)
		return
	}
	w.b = append(w.b, 0xf0|typ)
	w.varint(uint64(n))
}

func (w *compactWriter) bool(id int16, v bool) {
	if v {
		w.field(id, ctTrue)
	} else {
		w.field(id, ctFalse)
	}
}

func (w *compactWriter) begin(id int16) {
	if id != 0 {
		w.field(id, ctStruct)
	}
	w.last = append(w.last, 0)
}

func (w *compactWriter) end() {
	w.b = append(w.b, ctStop)
	w.last = w.last[:len(w.last)-1]
}

// encodeHeader encodes a page header; only the fields set in h are written.
func encodeHeader(h pageHeader) []byte {
	var w compactWriter
	w.begin(0)
	if h.hasType {
		w.i32(1, h.typ)
	}
	if h.hasUncompressed {
		w.i32(2, h.uncompressed)
	}
	if h.hasCompressed {
		w.i32(3, h.compressed)
	}
	// a binary field to skip (a CRC is an i32; statistics are a struct)
	w.field(4, ctI32)
	w.varint(12345)
	switch {
	case h.hasData:
		w.begin(5)
		w.i32(1, h.numValues)
		w.i32(2, h.encoding)
		w.i32(3, h.defEncoding)
		w.i32(4, int32(parquet.Encodings.RLE))
		w.begin(5) // statistics
		w.field(1, ctBinary)
		w.varint(3)
		w.b = append(w.b, "max"...)
		w.end()
		w.end()
	case h.hasDict:
		w.begin(7)
		w.i32(1, h.numValues)
		w.i32(2, h.encoding)
		w.bool(3, false)
		w.end()
	case h.hasDataV2:
		w.begin(8)
		w.i32(1, h.numValues)
		w.i32(2, 0)
		w.i32(3, h.numValues)
		w.i32(4, h.encoding)
		w.i32(5, h.defBytes)
		w.i32(6, h.repBytes)
		w.bool(7, h.isCompressed)
		w.end()
	}
	w.end()
	return w.b
}

// page is a page of a synthetic column chunk.
type page struct {
	h    pageHeader
	body []byte
}

func dictPage(values int32, body []byte) page {
	return page{pageHeader{typ: pageTypeDict, hasDict: true, numValues: values, encoding: int32(parquet.Encodings.Plain)}, body}
}

func dataPage(values int32, enc parquet.Encoding, body []byte) page {
	return page{pageHeader{typ: pageTypeData, hasData: true, numValues: values, encoding: int32(enc), defEncoding: int32(parquet.Encodings.RLE)}, body}
}

// plainStrings is the PLAIN encoding of n strings.
func plainStrings(n int) []byte {
	var b []byte
	for i := 0; i < n; i++ {
		s := fmt.Sprint("v", i)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	return b
}

// rleRun is one RLE run of n values v of w bits.
func rleRun(n int, v uint32, w int) []byte {
	b := binary.AppendUvarint(nil, uint64(n)<<1)
	for i := 0; i < (w+7)/8; i++ {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

// deltaHdr is a DELTA_BINARY_PACKED header.
func deltaHdr(block, minis, total uint64, first int64) []byte {
	b := binary.AppendUvarint(nil, block)
	b = binary.AppendUvarint(b, minis)
	b = binary.AppendUvarint(b, total)
	return binary.AppendVarint(b, first)
}

// chunkOf lays out pages (their headers filled in, sizes included when
// not set) as a column chunk of codec and checks it with the guard.
func chunkOf(codec compress.Compression, phys parquet.Type, maxDef int16, pages ...page) (guardChunk, []byte) {
	var data []byte
	var values int64
	c, _ := compress.GetCodec(codec)
	for _, p := range pages {
		body := p.body
		if codec != compress.Codecs.Uncompressed && (p.h.typ != pageTypeDataV2 || p.h.isCompressed) {
			body = c.Encode(nil, p.body)
		}
		h := p.h
		h.hasType = true
		if !h.hasUncompressed {
			h.uncompressed, h.hasUncompressed = int32(len(p.body)), true
		}
		if !h.hasCompressed {
			h.compressed, h.hasCompressed = int32(len(body)), true
		}
		data = append(data, encodeHeader(h)...)
		data = append(data, body...)
		if h.typ != pageTypeDict {
			values += int64(h.numValues)
		}
	}
	return guardChunk{f: bytes.NewReader(data), end: int64(len(data)), values: values, codec: codec, phys: phys,
		maxDef: maxDef, decoded: true, budget: DefaultDecodeBytes}, data
}

// The guard refuses, with an error saying why, the sizes and counts that
// would make arrow-go allocate more than the file holds, and accepts what
// healthy files have.
func TestPageGuardRefusesUnjustifiedSizes(t *testing.T) {
	bytesOf := func(n int) []byte { return bytes.Repeat([]byte("abcdefgh"), n/8+1)[:n] }
	withSizes := func(p page, unc, comp int32) page {
		p.h.uncompressed, p.h.hasUncompressed, p.h.compressed, p.h.hasCompressed = unc, true, comp, true
		return p
	}
	withUnc := func(p page, unc int32) page {
		p.h.uncompressed, p.h.hasUncompressed = unc, true
		return p
	}
	nullLevels := rleRun(1<<30, 0, 1)
	v2 := func(values int32, enc parquet.Encoding, defs []byte, vals []byte) page {
		return page{pageHeader{typ: pageTypeDataV2, hasDataV2: true, numValues: values, encoding: int32(enc),
			defBytes: int32(len(defs)), isCompressed: false}, append(append([]byte(nil), defs...), vals...)}
	}
	ba, i32 := parquet.Types.ByteArray, parquet.Types.Int32
	dict3 := dictPage(3, plainStrings(3))
	// a data page after the dictionary (arrow-go reads pages until their
	// values add up to the chunk's)
	indices := dataPage(10, parquet.Encodings.RLEDict, append([]byte{2}, rleRun(10, 2, 2)...))
	cases := []struct {
		name   string
		codec  compress.Compression
		phys   parquet.Type
		maxDef int16
		pages  []page
		want   string // "": accepted
	}{
		{"plain", compress.Codecs.Uncompressed, i32, 0, []page{dataPage(4, parquet.Encodings.Plain, bytesOf(16))}, ""},
		{"a huge uncompressed size", compress.Codecs.Uncompressed, i32, 0,
			[]page{withSizes(dataPage(4, parquet.Encodings.Plain, bytesOf(16)), 1<<30-1, 16)}, "uncompressed page of 16 bytes said to hold 1073741823"},
		{"more than maxPageBytes", compress.Codecs.Brotli, i32, 0,
			[]page{withSizes(dataPage(4, parquet.Encodings.Plain, bytesOf(16)), 1<<30+1, 16)}, "at most 1073741824"},
		{"negative sizes", compress.Codecs.Uncompressed, i32, 0,
			[]page{withSizes(dataPage(4, parquet.Encodings.Plain, bytesOf(16)), -1, 16)}, "corrupt page header"},
		{"past the chunk", compress.Codecs.Uncompressed, i32, 0,
			[]page{withSizes(dataPage(4, parquet.Encodings.Plain, bytesOf(16)), 1<<20, 1<<20)}, "the column chunk has 16 left"},
		{"snappy", compress.Codecs.Snappy, i32, 0, []page{dataPage(4, parquet.Encodings.Plain, bytesOf(16))}, ""},
		{"snappy, another size", compress.Codecs.Snappy, i32, 0,
			[]page{withUnc(dataPage(1000, parquet.Encodings.Plain, bytesOf(4000)), 400000)}, "snappy page of 4000 bytes said to hold 400000"},
		{"gzip", compress.Codecs.Gzip, i32, 0, []page{dataPage(1<<14, parquet.Encodings.Plain, make([]byte, 1<<16))}, ""},
		{"gzip, beyond its ratio", compress.Codecs.Gzip, i32, 0,
			[]page{withUnc(dataPage(4, parquet.Encodings.Plain, bytesOf(16)), 1<<29)}, "bytes of gzip said to hold 536870912"},
		{"zstd", compress.Codecs.Zstd, i32, 0, []page{dataPage(1<<16, parquet.Encodings.Plain, make([]byte, 1<<18))}, ""},
		{"zstd, beyond its blocks", compress.Codecs.Zstd, i32, 0,
			[]page{withUnc(dataPage(4, parquet.Encodings.Plain, bytesOf(16)), 1<<29)}, "zstd blocks that decode to"},
		{"zstd, a frame larger than the page", compress.Codecs.Zstd, i32, 0,
			[]page{withUnc(dataPage(4, parquet.Encodings.Plain, make([]byte, 1<<20)), 1000)}, "zstd frames of 1048576 bytes or more in a page said to hold 1000"},
		{"brotli", compress.Codecs.Brotli, i32, 0, []page{dataPage(4, parquet.Encodings.Plain, bytesOf(16))}, ""},
		{"a dictionary page", compress.Codecs.Uncompressed, ba, 0, []page{dict3, indices}, ""},
		{"a dictionary page of more values than bytes", compress.Codecs.Uncompressed, ba, 0,
			[]page{dictPage(1<<30, plainStrings(3)), indices}, "dictionary page of 1073741824 values"},
		{"a second dictionary page", compress.Codecs.Uncompressed, ba, 0, []page{dict3, dict3, indices}, "a second dictionary page"},
		{"dictionary indices", compress.Codecs.Uncompressed, ba, 0,
			[]page{dict3, dataPage(10, parquet.Encodings.RLEDict, append([]byte{2}, rleRun(10, 2, 2)...))}, ""},
		{"dictionary indices of 64 bits", compress.Codecs.Uncompressed, ba, 0,
			[]page{dict3, dataPage(10, parquet.Encodings.RLEDict, append([]byte{64}, rleRun(10, 2, 8)...))}, "dictionary indices of 64 bits"},
		{"dictionary indices out of range", compress.Codecs.Uncompressed, ba, 0,
			[]page{dict3, dataPage(10, parquet.Encodings.RLEDict, append([]byte{31}, rleRun(10, 1<<30, 31)...))}, "dictionary index 1073741824 not in [0, 3)"},
		{"dictionary indices of more bits than needed, in range", compress.Codecs.Uncompressed, ba, 0,
			[]page{dict3, dataPage(10, parquet.Encodings.RLEDict, append([]byte{20}, rleRun(10, 2, 20)...))}, ""},
		{"dictionary indices of nulls only", compress.Codecs.Uncompressed, ba, 1,
			[]page{dict3, dataPage(10, parquet.Encodings.RLEDict, append(binary.LittleEndian.AppendUint32(nil, 2), rleRun(10, 0, 1)...))}, ""},
		{"dictionary indices in a page v2", compress.Codecs.Uncompressed, ba, 1,
			[]page{dict3, v2(10, parquet.Encodings.RLEDict, rleRun(10, 1, 1), append([]byte{31}, rleRun(10, 1<<30, 31)...))}, "not in [0, 3)"},
		{"dictionary-encoded ints", compress.Codecs.Uncompressed, i32, 0,
			[]page{dictPage(3, bytesOf(12)), dataPage(10, parquet.Encodings.RLEDict, append([]byte{2}, rleRun(10, 2, 2)...))}, ""},
		{"dictionary-encoded ints out of range", compress.Codecs.Uncompressed, i32, 0,
			[]page{dictPage(3, bytesOf(12)), dataPage(10, parquet.Encodings.RLEDict, append([]byte{31}, rleRun(10, 1<<30, 31)...))}, "not in [0, 3)"},
		{"dictionary-encoded ints cut short", compress.Codecs.Uncompressed, i32, 0,
			[]page{dictPage(3, bytesOf(12)), dataPage(10, parquet.Encodings.RLEDict, append([]byte{2}, rleRun(4, 2, 2)...))}, "dictionary indices"},
		{"no dictionary page", compress.Codecs.Uncompressed, ba, 0,
			[]page{dataPage(10, parquet.Encodings.RLEDict, append([]byte{2}, rleRun(10, 2, 2)...))}, "without a dictionary page"},
		{"delta ints", compress.Codecs.Uncompressed, i32, 0,
			[]page{dataPage(1, parquet.Encodings.DeltaBinaryPacked, deltaHdr(128, 4, 1, 7))}, ""},
		{"delta blocks too large", compress.Codecs.Uncompressed, i32, 0,
			[]page{dataPage(1, parquet.Encodings.DeltaBinaryPacked, deltaHdr(1<<40, 1, 1, 7))}, "DELTA_BINARY_PACKED blocks of 1099511627776 values"},
		{"delta miniblocks of no values", compress.Codecs.Uncompressed, i32, 0,
			[]page{dataPage(1, parquet.Encodings.DeltaBinaryPacked, deltaHdr(128, 1<<20, 1, 7))}, "in 1048576 miniblocks"},
		{"delta lengths", compress.Codecs.Uncompressed, ba, 0,
			[]page{dataPage(2, parquet.Encodings.DeltaLengthByteArray, append(deltaHdr(128, 4, 2, 3), append([]byte{0, 1, 0, 0, 0}, "abcdef"...)...))}, ""},
		{"more delta lengths than values", compress.Codecs.Uncompressed, ba, 0,
			[]page{dataPage(2, parquet.Encodings.DeltaLengthByteArray, deltaHdr(128, 4, 1<<40, 3))}, "1099511627776 lengths in a page of 2 values"},
		{"delta strings", compress.Codecs.Uncompressed, ba, 0,
			[]page{dataPage(1, parquet.Encodings.DeltaByteArray, append(deltaHdr(128, 4, 1, 0), append(deltaHdr(128, 4, 1, 3), "abc"...)...))}, ""},
		{"delta strings of too many values", compress.Codecs.Uncompressed, ba, 1,
			[]page{dataPage(1<<30, parquet.Encodings.DeltaByteArray, append(binary.LittleEndian.AppendUint32(nil, uint32(len(nullLevels))), append(nullLevels, deltaHdr(128, 4, 0, 0)...)...))},
			"DELTA_* page of 1073741824 values"},
		{"delta suffixes past their prefixes", compress.Codecs.Uncompressed, ba, 0,
			[]page{dataPage(200, parquet.Encodings.DeltaByteArray, append(deltaHdr(128, 4, 200, 0), 0, 8, 8, 8, 8))}, "prefix lengths"},
		{"an empty page", compress.Codecs.Uncompressed, i32, 0, []page{dataPage(0, parquet.Encodings.Plain, nil)}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := chunkOf(tc.codec, tc.phys, tc.maxDef, tc.pages...)
			var g pageGuard
			_, err := g.check(context.Background(), &c)
			if tc.want == "" {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.want)
			}
		})
	}

	// Headers: a required field missing, cut short, nested too deep.
	var g pageGuard
	h := dataPage(4, parquet.Encodings.Plain, nil).h
	h.hasType, h.hasUncompressed, h.hasCompressed = true, true, true
	enc := encodeHeader(h)
	c := guardChunk{f: bytes.NewReader(enc[:len(enc)-3]), end: int64(len(enc) - 3), values: 4, codec: compress.Codecs.Uncompressed}
	_, err := g.check(context.Background(), &c)
	assert.ErrorIs(t, err, errHeaderShort)
	h.hasCompressed = false
	enc = encodeHeader(h)
	c = guardChunk{f: bytes.NewReader(enc), end: int64(len(enc)), values: 4, codec: compress.Codecs.Uncompressed}
	_, err = g.check(context.Background(), &c)
	assert.ErrorContains(t, err, "a required field is missing")
	deep := append(bytes.Repeat([]byte{0x1c}, 100), bytes.Repeat([]byte{0}, 101)...) // structs in structs
	c = guardChunk{f: bytes.NewReader(deep), end: int64(len(deep)), values: 4, codec: compress.Codecs.Uncompressed}
	_, err = g.check(context.Background(), &c)
	assert.ErrorContains(t, err, "nested too deep")
}

// corruptDictWidth returns a copy of the file at path whose first
// dictionary-encoded data page of column col has its indices' bit width
// set to w (the file is uncompressed, its pages v1).
func corruptDictWidth(t *testing.T, path string, col int, w byte) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	pf, err := file.OpenParquetFile(path, false)
	require.NoError(t, err)
	defer pf.Close()
	md := pf.MetaData()
	cc, err := md.RowGroup(0).ColumnChunk(col)
	require.NoError(t, err)
	off, n, err := chunkRange(md, cc, int64(len(data)))
	require.NoError(t, err)
	for pos := off; pos < off+n; {
		h, k, err := parsePageHeader(data[pos : off+n])
		require.NoError(t, err)
		pos += int64(k)
		if h.typ == pageTypeData && parquet.Encoding(h.encoding) == parquet.Encodings.RLEDict {
			levels := int64(0)
			if md.Schema.Column(col).MaxDefinitionLevel() > 0 {
				levels = 4 + int64(binary.LittleEndian.Uint32(data[pos:]))
			}
			d := bytes.Clone(data)
			d[pos+levels] = w
			return d
		}
		pos += int64(h.compressed)
	}
	t.Fatal("no dictionary-encoded data page")
	return nil
}

// A leaf of a struct is decoded in the worker's goroutine: a panic of
// arrow-go's decoders on corrupt bytes there (here: indices of a bit width
// arrow-go's dictionary decoder refuses without saying so, which leaves it
// without an index decoder) is recovered, and is an error of the chunk. (In
// a goroutine of pqarrow's struct reader it would end the process.)
func TestNestedLeafPanicIsRecovered(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	rec := pqRecord(mem, guardCols(), 500, 3)
	path := filepath.Join(dir, "nested.parquet")
	writePQ(t, path, rec, pqConfig{props: []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Uncompressed),
		parquet.WithDictionaryDefault(true)}})
	rec.Release()
	_, pqf, err := probeParquet(pathSource(t, path))
	require.NoError(t, err)
	col := -1
	for c := 0; c < pqf.meta.Schema.NumColumns(); c++ {
		if pqf.meta.Schema.Column(c).ColumnPath().String() == "rec.s" {
			col = c
		}
	}
	require.GreaterOrEqual(t, col, 0)
	bad := filepath.Join(dir, "bad.parquet")
	require.NoError(t, os.WriteFile(bad, corruptDictWidth(t, path, col, 64), 0o644))

	schema, pqf, err := probeParquet(pathSource(t, bad))
	require.NoError(t, err)
	leaf, ok := arrow17.Find(arrow17.Leaves(schema), "rec.s")
	require.True(t, ok)
	leaves, err := parquetLeaves(pqf, []arrow17.Leaf{leaf}, []int{0}, false)
	require.NoError(t, err)
	f, err := os.Open(bad)
	require.NoError(t, err)
	defer f.Close()
	pf, err := file.NewParquetReader(f, file.WithReadProps(parquetReadProps(pqf.meta)), file.WithMetadata(pqf.meta))
	require.NoError(t, err)
	fr, err := newLeafFileReader(pf, mem)
	require.NoError(t, err)
	r := &parquetRun{pqf: pqf, leaves: leaves, mem: mem, eng: newEngine(t, mem), aggs: agg.Default, decodeBytes: DefaultDecodeBytes}

	// Straight to pqarrow, without the guard: the panic is this goroutine's.
	var recovered any
	func() {
		defer func() { recovered = recover() }()
		_, err = r.arrowChunk(context.Background(), fr, 0, &leaves[0], pqf.meta.RowGroup(0).NumRows())
	}()
	assert.NotNil(t, recovered, "arrow-go's decoder panics on these bytes (err: %v)", err)

	// Through the guard: a clear error, before arrow-go reads the chunk.
	var wk worker
	fi, err := f.Stat()
	require.NoError(t, err)
	_, err = r.chunk(context.Background(), f, fi.Size(), fr, &wk, nil, 0, &leaves[0])
	assert.ErrorContains(t, err, `column "rec.s": page 1: dictionary indices of 64 bits`)
}

// Fuzzed files that made arrow-go allocate what their headers declared, or
// panic in a goroutine of pqarrow, are errors naming the file.
func TestCorruptPagesAreErrors(t *testing.T) {
	for _, in := range []string{"FuzzDetect/e7453455d4e3fdd4", "FuzzParquet/b872d1e8299aee33"} {
		t.Run(in, func(t *testing.T) {
			data := readCorpusEntry(t, filepath.Join("testdata", "fuzz", in))
			path := writeInput(t, "input.parquet", data)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			_, _, err := aggregatePaths(context.Background(), t, mem, []string{path}, nil, Options{Workers: 2})
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, path, e.Path)
			assert.NotContains(t, err.Error(), "decoder failed", "a check, not a recovered panic")
		})
	}
}

// readCorpusEntry reads the bytes of a fuzzing corpus file.
func readCorpusEntry(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	const prefix = "go test fuzz v1\n[]byte("
	require.True(t, bytes.HasPrefix(raw, []byte(prefix)))
	lit := bytes.TrimSuffix(bytes.TrimSpace(raw[len(prefix):]), []byte(")"))
	s, err := strconv.Unquote(string(lit))
	require.NoError(t, err)
	return []byte(s)
}

// benchFile writes (once per process) a file of a nested string column,
// dictionary-encoded (1000 values) and not (distinct values), and of
// numbers aggregated from their pages: 2M rows, snappy, default pages.
var benchFile = func() func(b *testing.B) string {
	var path string
	return func(b *testing.B) string {
		if path != "" {
			return path
		}
		nested := arrow.StructOf(
			arrow.Field{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
			arrow.Field{Name: "u", Type: arrow.BinaryTypes.String, Nullable: true},
		)
		cols := []pqCol{
			{field: arrow.Field{Name: "rec", Type: nested, Nullable: true}, nulls: 0.05, fill: func(bl array.Builder, r *rand.Rand) {
				sb := bl.(*array.StructBuilder)
				sb.Append(true)
				sb.FieldBuilder(0).(*array.StringBuilder).Append(fmt.Sprintf("category-%04d", r.IntN(1000)))
				sb.FieldBuilder(1).(*array.StringBuilder).Append(fmt.Sprintf("id-%016x", r.Uint64()))
			}},
			genCol("x", arrow.PrimitiveTypes.Float64, true, 0.1, true, dyadic),
			genCol("n", arrow.PrimitiveTypes.Int64, true, 0.1, true, func(r *rand.Rand) int64 { return r.Int64N(1 << 40) }),
		}
		dir, err := os.MkdirTemp("", "pqguard-bench")
		require.NoError(b, err)
		path = filepath.Join(dir, "nested.parquet")
		f, err := os.Create(path)
		require.NoError(b, err)
		var w *pqarrow.FileWriter
		for part := 0; part < 4; part++ {
			rec := pqRecord(memory.DefaultAllocator, cols, 500_000, uint64(part))
			if w == nil {
				w, err = pqarrow.NewFileWriter(rec.Schema(), f, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy),
					parquet.WithMaxRowGroupLength(500_000)), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
				require.NoError(b, err)
			}
			require.NoError(b, w.WriteBuffered(rec))
			rec.Release()
		}
		require.NoError(b, w.Close())
		return path
	}
}()

// BenchmarkNestedStrings aggregates the columns of benchFile with one
// worker: rec.s and rec.u go through pqarrow (and the guard), x and n
// through the page path (and the guard's header walk).
func BenchmarkNestedStrings(b *testing.B) {
	path := benchFile(b)
	fi, err := os.Stat(path)
	require.NoError(b, err)
	eng, err := engine.New(engine.WithDevice(engine.DeviceCPU), engine.WithThreads(1))
	require.NoError(b, err)
	defer eng.Close()
	for _, cols := range [][]string{{"rec.s"}, {"rec.u"}, {"x", "n"}} {
		b.Run(fmt.Sprint(cols), func(b *testing.B) {
			b.SetBytes(fi.Size())
			for i := 0; i < b.N; i++ {
				d, err := Open(context.Background(), []Source{{Path: path, Format: Parquet, Size: fi.Size()}}, Options{Workers: 1})
				require.NoError(b, err)
				sel, err := d.Select(cols)
				require.NoError(b, err)
				_, err = d.Aggregate(context.Background(), eng, sel, AggregateOptions{})
				require.NoError(b, err)
				d.Close()
			}
		})
	}
}

// BenchmarkPageGuard checks the chunks of benchFile's columns with the
// guard alone (as chunks decoded by arrow-go: the strictest checks).
func BenchmarkPageGuard(b *testing.B) {
	path := benchFile(b)
	_, pqf, err := probeParquet(pathSource(b, path))
	require.NoError(b, err)
	f, err := os.Open(path)
	require.NoError(b, err)
	defer f.Close()
	fi, err := f.Stat()
	require.NoError(b, err)
	r := &parquetRun{pqf: pqf, decodeBytes: DefaultDecodeBytes}
	for col := 0; col < pqf.meta.Schema.NumColumns(); col++ {
		b.Run(pqf.meta.Schema.Column(col).ColumnPath().String(), func(b *testing.B) {
			var g pageGuard
			for i := 0; i < b.N; i++ {
				for rg := range pqf.meta.RowGroups {
					cc, err := pqf.meta.RowGroup(rg).ColumnChunk(col)
					require.NoError(b, err)
					if _, err := r.guard(context.Background(), &g, f, fi.Size(), cc, col, true); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// pageStarts returns where the pages of every column chunk of the file
// start, and how long their headers are.
func pageStarts(t *testing.T, path string, data []byte) (starts [][2]int64) {
	t.Helper()
	for _, cr := range chunkRanges(t, path) {
		for pos := cr[0]; pos < cr[1]; {
			h, n, err := parsePageHeader(data[pos:cr[1]])
			if err != nil {
				break // the padding of an old writer's chunk
			}
			starts = append(starts, [2]int64{pos, int64(n)})
			pos += int64(n) + int64(h.compressed)
		}
	}
	return starts
}

// Corrupt page headers and page fronts (levels, bit widths, DELTA_*
// headers), in files whose columns go through the page path and through
// arrow-go's decoders, are errors or results, never a crash, a hang, or
// allocations out of proportion with the file (a few hundred KiB here).
func TestCorruptPagesStayBounded(t *testing.T) {
	dir := t.TempDir()
	configs := guardConfigs()
	for _, ci := range []int{0, 2, 3, 9} { // v1 snappy, v2 snappy, v1 uncompressed, v2 zstd with DELTA_*
		cfg := configs[ci]
		t.Run(cfg.name, func(t *testing.T) {
			good := writeGuardFile(t, dir, cfg, uint64(ci))
			data, err := os.ReadFile(good)
			require.NoError(t, err)
			starts := pageStarts(t, good, data)
			require.NotEmpty(t, starts)
			r := rand.New(rand.NewPCG(uint64(ci), 11))
			for trial := 0; trial < 40; trial++ {
				d := bytes.Clone(data)
				p := starts[r.IntN(len(starts))]
				at := p[0] + r.Int64N(p[1]+16) // in the header or just after
				switch r.IntN(4) {
				case 0: // any byte
					d[at] = byte(r.Uint32())
				case 1: // a run of 0xFF in the header: huge varints
					for i := 0; i < 5 && p[0]+int64(i) < p[0]+p[1]; i++ {
						d[p[0]+r.Int64N(p[1])] = 0xff
					}
				case 2: // a bit width of 33 to 63 bits
					at = p[0] + p[1] + r.Int64N(16)
					d[at] = byte(33 + r.IntN(31))
				default: // a header declaring a huge size or count
					h, _, err := parsePageHeader(data[p[0]:])
					require.NoError(t, err)
					huge := int32(1<<31 - 1 - r.IntN(1<<20))
					switch r.IntN(3) {
					case 0:
						h.uncompressed = huge
					case 1:
						h.compressed = huge
					default:
						h.numValues = huge
					}
					d = append(append(append([]byte(nil), data[:p[0]]...), encodeHeader(h)...), data[p[0]+p[1]:]...)
				}
				path := filepath.Join(dir, fmt.Sprintf("bad-%d-%d.parquet", ci, trial))
				require.NoError(t, os.WriteFile(path, d, 0o644))
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				_, _, err := aggregatePaths(ctx, t, memory.DefaultAllocator, []string{path}, nil, Options{Workers: 2})
				require.NoError(t, ctx.Err(), "%s: hung", path)
				cancel()
				runtime.ReadMemStats(&after)
				assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(256<<20), "page at %d of %s: allocated %d bytes", p[0], cfg.name, after.TotalAlloc-before.TotalAlloc)
				if err != nil {
					var e *Error
					require.ErrorAs(t, err, &e, "%s: %v", path, err)
					assert.Equal(t, path, e.Path)
				}
				os.Remove(path)
			}
		})
	}
}
