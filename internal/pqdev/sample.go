package pqdev

import (
	"encoding/binary"
	"fmt"

	"github.com/golang/snappy"

	"github.com/arrowagg/arrowagg/column"
)

// Sample sizes: pages of 20,000 rows, as Arrow C++'s writer (pyarrow's)
// cuts them by default (its max_rows_per_page), of an int64 column (160 KB
// of values a page); dictionaries of 2^SampleIndexBits values.
const (
	SampleRows      = 20000
	SampleIndexBits = 10
)

// SampleValue is the i-th value of the sample pages: what the int64
// column of the file benchmark holds (a mixed counter shifted right by 27:
// random integers of 37 bits, which snappy compresses into short copies of
// their high bytes between literals, the kernels' slowest case).
func SampleValue(i uint64) int64 {
	x := i*4 + 1 + 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return int64(x^x>>31) >> 27
}

// Sample is pages of an int64 column, snappy-compressed or stored as they
// are, of PLAIN values or of dictionary indices (dictionary), as a Parquet writer's
// flat optional column holds them with no nulls (data pages v1: the
// definition levels, one RLE run, then the values): pages of SampleRows
// rows, distinct distinct ones repeated to pages pages, in one chunk. Page
// k's values are SampleValue(j) for j of page k % distinct (dictionary
// pages: dict[index], indices SampleValue(j) mod the dictionary's size,
// the dictionary's values SampleValue of 2^40 on).
//
// The repeated pages share their stored bytes (a page table's records may
// point at the same bytes), so that a calibration compresses and uploads
// little and still gives the kernels as many pages as a large file's batch
// (Layout.Spread then gives each its own copy on the device).
func Sample(snappyPages, dictionary bool, pages, distinct int) (*column.Pages, error) {
	if pages < 1 || distinct < 1 || distinct > pages {
		return nil, fmt.Errorf("sample of %d pages, %d distinct", pages, distinct)
	}
	p := &column.Pages{Type: column.TypeName("int64"), Kind: column.Int64, Nullable: true,
		Chunks: []column.Span{{}}, Dicts: [][]byte{nil}, Rows: int64(pages) * SampleRows}
	if dictionary {
		dict := make([]byte, 8<<SampleIndexBits)
		for i := range 1 << SampleIndexBits {
			binary.LittleEndian.PutUint64(dict[8*i:], uint64(sampleDictValue(uint64(i))))
		}
		p.Dicts[0] = dict
	}
	type stored struct {
		off         int64
		stored, raw int
	}
	bodies := make([]stored, distinct)
	for k := range bodies {
		body := sampleBody(dictionary, uint64(k)*SampleRows)
		raw := len(body)
		if snappyPages {
			body = snappy.Encode(nil, body)
		}
		bodies[k] = stored{off: int64(len(p.Data)), stored: len(body), raw: raw}
		p.Data = append(p.Data, body...)
	}
	p.Chunks[0].Len = int64(len(p.Data))
	for k := range pages {
		b := bodies[k%distinct]
		p.Pages = append(p.Pages, column.Page{Offset: b.off, Stored: b.stored, Body: b.raw, Rows: SampleRows,
			Snappy: snappyPages, Dictionary: dictionary, Index: k})
	}
	return p, nil
}

// sampleDictValue is the sample dictionary's value i.
func sampleDictValue(i uint64) int64 { return SampleValue(1<<40 + i) }

// sampleBody is a page v1's body of SampleRows rows from value first: the
// definition levels (every row valid: one RLE run of ones, bit width 1),
// then the values, PLAIN or as dictionary indices (a bit width, then
// bit-packed groups of eight).
func sampleBody(dictionary bool, first uint64) []byte {
	const rows = SampleRows
	levels := binary.AppendUvarint(nil, rows<<1) // an RLE run: its length, then its value in a byte
	levels = append(levels, 1)
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(levels)))
	b = append(b, levels...)
	if !dictionary {
		for j := range uint64(rows) {
			b = binary.LittleEndian.AppendUint64(b, uint64(SampleValue(first+j)))
		}
		return b
	}
	const width = SampleIndexBits
	b = append(b, width)
	b = binary.AppendUvarint(b, rows/8<<1|1) // bit-packed: its groups of eight, then their bits
	var acc uint64
	n := 0
	for j := range uint64(rows) {
		acc |= (uint64(SampleValue(first+j)) & (1<<width - 1)) << n
		for n += width; n >= 8; n -= 8 {
			b = append(b, byte(acc))
			acc >>= 8
		}
	}
	return b // (rows*width is a whole number of bytes)
}

// SampleBody is the size of a sample page's body (dictionary: of
// dictionary indices), decompressed.
func SampleBody(dictionary bool) int { return len(sampleBody(dictionary, 0)) }

// SampleView is the values of the rows of Sample(_, dictionary, pages,
// distinct), in order, as an int64 column: what its pages decode to.
func SampleView(dictionary bool, pages, distinct int) *column.View {
	n := pages * SampleRows
	buf := make([]byte, 0, 8*n)
	for k := range pages {
		first := uint64(k%distinct) * SampleRows
		for j := range uint64(SampleRows) {
			v := SampleValue(first + j)
			if dictionary {
				v = sampleDictValue(uint64(v) & (1<<SampleIndexBits - 1))
			}
			buf = binary.LittleEndian.AppendUint64(buf, uint64(v))
		}
	}
	return &column.View{Type: column.TypeName("int64"), Kind: column.Int64, Len: n, Values: buf}
}
