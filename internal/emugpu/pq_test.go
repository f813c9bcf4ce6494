//go:build emu

package emugpu

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/golang/snappy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/internal/pqdev"
	"github.com/arrowagg/arrowagg/planner"
)

// v1Page is the body of a data page v1 of a flat optional int32 column:
// the definition levels (RLE/bit-packed hybrid, bit width 1) with their
// length, then the values.
func v1Page(levels []byte, vals []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(levels)))
	return append(append(b, levels...), vals...)
}

func int32s(xs ...int32) []byte {
	var b []byte
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return b
}

// onePage is Pages of one page whose stored bytes are stored (body bytes
// once decompressed), of rows rows.
func onePage(stored []byte, body, rows int, snappyPage, dict bool, dictVals []byte) *column.Pages {
	return &column.Pages{Type: column.TypeName("int32"), Kind: column.Int32, Nullable: true, Data: stored,
		Chunks: []column.Span{{Off: 0, Len: int64(len(stored))}}, Dicts: [][]byte{dictVals},
		Pages: []column.Page{{Chunk: 0, Offset: 0, Stored: len(stored), Body: body, Rows: rows, Snappy: snappyPage,
			Dictionary: dict, RowGroup: 3, Index: 1}}, Rows: int64(rows)}
}

func aggregate(p *column.Pages) (agg.State, error) {
	s := agg.New(column.FamilySigned, agg.Default)
	err := (&Backend{}).UpdatePages(context.Background(), p, &s)
	return s, err
}

// Levels of 5 rows: bit-packed, one group: 1,0,1,1,1 (four values).
var levels5 = []byte{0x03, 0b11101}

func TestPagesKernelsValid(t *testing.T) {
	body := v1Page(levels5, int32s(7, -2, 40, 1))
	for _, snap := range []bool{false, true} {
		stored := body
		if snap {
			stored = snappy.Encode(nil, body)
		}
		s, err := aggregate(onePage(stored, len(body), 5, snap, false, nil))
		require.NoError(t, err)
		assert.Equal(t, int64(4), s.Count)
		assert.Equal(t, int64(1), s.NullCount)
		assert.Equal(t, agg.Int192From(46), s.Sum)
		assert.Equal(t, int64(-2), int64(s.Min[0]))
		assert.Equal(t, int64(40), int64(s.Max[0]))
	}
	// Dictionary indices of bit width 2: an RLE run of 2 of index 3, then a
	// bit-packed group 1, 0 (and padding).
	idx := []byte{2, 0x04, 0x03, 0x03, 0b0001}
	s, err := aggregate(onePage(v1Page(levels5, idx), len(v1Page(levels5, idx)), 5, false, true, int32s(10, 20, 30, 40)))
	require.NoError(t, err)
	assert.Equal(t, int64(4), s.Count)
	assert.Equal(t, agg.Int192From(110), s.Sum, "40 + 40 + 20 + 10")
}

// TestPagesKernelsCorrupt gives the kernels pages whose bytes contradict
// their headers: each is an error naming the page and what is wrong, and the
// state is left alone.
func TestPagesKernelsCorrupt(t *testing.T) {
	good := int32s(7, -2, 40, 1)
	cases := map[string]corruptPage{
		"levels cut short": {onePage(v1Page([]byte{0x03}, good), 4+1+16, 5, false, false, nil), "definition levels"},
		"levels length past the body": {func() *column.Pages {
			b := v1Page(levels5, good)
			binary.LittleEndian.PutUint32(b, 1000)
			return onePage(b, len(b), 5, false, false, nil)
		}(), "definition levels"},
		"a level of 2":  {onePage(v1Page([]byte{0x0a, 0x02}, good), 4+2+16, 5, false, false, nil), "definition levels"},
		"values short":  {onePage(v1Page(levels5, good[:12]), 4+2+12, 5, false, false, nil), "fewer values"},
		"index outside": {onePage(v1Page(levels5, []byte{2, 0x08, 0x03}), 4+2+3, 5, false, true, int32s(1, 2)), "outside the dictionary"},
		"bit width 33":  {onePage(v1Page(levels5, []byte{33, 0x08, 0x03}), 4+2+3, 5, false, true, int32s(1, 2)), "bit width"},
		"indices short": {onePage(v1Page(levels5, []byte{2, 0x03}), 4+2+2, 5, false, true, int32s(1, 2)), "indices"},
		"snappy corrupt": {func() *column.Pages {
			b := snappy.Encode(nil, v1Page(levels5, good))
			b[len(b)-3] ^= 0xff
			b = append(b[:2], 0xfe, 0xff, 0xff) // a copy reaching before the start
			return onePage(b, 4+2+16, 5, true, false, nil)
		}(), "snappy"},
		"snappy length": {func() *column.Pages {
			b := snappy.Encode(nil, v1Page(levels5, good))
			return onePage(b, 4+2+16+1, 5, true, false, nil)
		}(), "snappy stream's length"},
	}
	checkCorrupt(t, cases, aggregate)
}

// corruptPage is a page whose bytes contradict its header, and what the
// error must say.
type corruptPage struct {
	p    *column.Pages
	want string
}

// checkCorrupt aggregates each page of cases with run: each is an error
// naming the page and what is wrong, and the state is left alone.
func checkCorrupt(t *testing.T, cases map[string]corruptPage, run func(*column.Pages) (agg.State, error)) {
	for name, c := range cases {
		s, err := run(c.p)
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), "row group 3: page 1: corrupt", name)
			assert.Contains(t, err.Error(), c.want, name)
		}
		assert.Equal(t, int64(0), s.Count+s.NullCount, name)
	}
}

// boolPage is Pages of one uncompressed data page v1 of a flat optional
// boolean column: the definition levels levels5 (four values of five rows),
// then the values as vals holds them (rle: RLE-encoded).
func boolPage(vals []byte, rle bool) *column.Pages {
	b := v1Page(levels5, vals)
	p := onePage(b, len(b), 5, false, false, nil)
	p.Type, p.Kind, p.Dicts = column.TypeName("bool"), column.Bool, [][]byte{nil}
	p.Pages[0].RLE = rle
	return p
}

func aggregateBools(p *column.Pages) (agg.State, error) {
	s := agg.New(column.FamilyBool, agg.Default)
	err := (&Backend{}).UpdatePages(context.Background(), p, &s)
	return s, err
}

// TestPagesKernelsBools folds pages of booleans, PLAIN (bit-packed) and RLE,
// and refuses those whose values are fewer than their levels say or whose
// RLE stream is corrupt.
func TestPagesKernelsBools(t *testing.T) {
	// True, false, true, true: bits 1101 (and bits past the four values
	// set, which must not count).
	s, err := aggregateBools(boolPage([]byte{0b11111101}, false))
	require.NoError(t, err)
	assert.Equal(t, int64(4), s.Count)
	assert.Equal(t, int64(1), s.NullCount)
	assert.Equal(t, agg.Int192From(3), s.Sum, "the true values")
	// RLE: a 4-byte length, then a run of 3 trues and a bit-packed group
	// of 8 (false, then padding bits set).
	rle := binary.LittleEndian.AppendUint32(nil, 4)
	rle = append(rle, 0x06, 0x01, 0x03, 0b11111110)
	s, err = aggregateBools(boolPage(rle, true))
	require.NoError(t, err)
	assert.Equal(t, int64(4), s.Count)
	assert.Equal(t, agg.Int192From(3), s.Sum, "the true values")

	cases := map[string]corruptPage{
		"plain short": {boolPage(nil, false), "fewer values"},
		"rle length past the page": {func() *column.Pages {
			b := append([]byte(nil), rle...)
			binary.LittleEndian.PutUint32(b, 9)
			return boolPage(b, true)
		}(), "RLE-encoded booleans"},
		"rle short":     {boolPage(append(binary.LittleEndian.AppendUint32(nil, 2), 0x06, 0x01), true), "RLE-encoded booleans"},
		"rle value 2":   {boolPage(append(binary.LittleEndian.AppendUint32(nil, 2), 0x08, 0x02), true), "RLE-encoded booleans"},
		"rle no length": {boolPage([]byte{0x08}, true), "RLE-encoded booleans"},
	}
	checkCorrupt(t, cases, aggregateBools)
}

// TestPagesKernelsDecimals folds decimals stored as INT64 (Kind Decimal64)
// with the int64 kernel: the state is a decimal one, its extremes the
// unscaled values sign-extended to 128 bits.
func TestPagesKernelsDecimals(t *testing.T) {
	var vals []byte
	for _, x := range []int64{-5, 1 << 62, 3, -(1 << 62)} {
		vals = binary.LittleEndian.AppendUint64(vals, uint64(x))
	}
	b := v1Page(levels5, vals)
	p := onePage(b, len(b), 5, false, false, nil)
	p.Type, p.Kind = column.TypeName("decimal(18, 2)"), column.Decimal64
	s := agg.New(column.FamilyDecimal, agg.Default)
	require.NoError(t, (&Backend{}).UpdatePages(context.Background(), p, &s))
	assert.Equal(t, int64(4), s.Count)
	assert.Equal(t, int64(1), s.NullCount)
	assert.Equal(t, agg.Int192From(-2), s.Sum)
	assert.Equal(t, [2]uint64{uint64(1<<64 - 1<<62), 1<<64 - 1}, s.Min, "-(2^62), sign-extended")
	assert.Equal(t, [2]uint64{1 << 62, 0}, s.Max)
}

// pageKinds are the kinds FuzzPageKernels picks from, with their families.
var pageKinds = []column.Kind{column.Int32, column.Int64, column.Uint64, column.Float32, column.Float64,
	column.Decimal32, column.Decimal64, column.Bool}

// FuzzPageKernels runs the page kernels on one page of any bytes, of a
// kind, page version, encoding, codec and levels the fuzzer picks: the
// kernels must not fault (the emulation's buffers end at an inaccessible
// page: a read past their padding faults) and either fail naming the page
// or give a state whose counts add up to the page's rows.
func FuzzPageKernels(f *testing.F) {
	f.Add(v1Page(levels5, int32s(7, -2, 40, 1)), uint8(0), uint8(1), uint16(5))
	f.Add(v1Page(levels5, []byte{2, 0x04, 0x03, 0x03, 0b0001}), uint8(0), uint8(1|4), uint16(5))
	f.Add(snappy.Encode(nil, v1Page(levels5, int32s(7, -2, 40, 1))), uint8(0), uint8(1|2), uint16(5))
	f.Add(v1Page(levels5, append(binary.LittleEndian.AppendUint32(nil, 4), 0x06, 0x01, 0x03, 0xfe)), uint8(7), uint8(1|8), uint16(5))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x03}, uint8(7), uint8(0), uint16(40))
	f.Fuzz(func(t *testing.T, stored []byte, kind, flags uint8, rows uint16) {
		k := pageKinds[int(kind)%len(pageKinds)]
		nullable, snap, dict, rle, v2 := flags&1 != 0, flags&2 != 0, flags&4 != 0 && k != column.Bool,
			flags&8 != 0 && k == column.Bool, flags&16 != 0
		body := len(stored)
		if snap { // (the body's size the page header says: the stream's own, or a lie)
			if n, err := snappy.DecodedLen(stored); err == nil && n < 1<<20 && flags&32 == 0 {
				body = n
			} else {
				body = int(rows)
			}
		}
		p := onePage(stored, body, int(rows), snap, dict, nil)
		p.Type, p.Kind, p.Nullable = column.TypeName(k.String()), k, nullable
		p.Pages[0].RLE = rle
		if dict {
			p.Dicts[0] = make([]byte, 3*k.Width()) // (three values)
		}
		if v2 && nullable && len(stored) > 0 {
			lev := int(stored[0]) % (len(stored) + 1)
			p.Pages[0].V2, p.Pages[0].Levels, p.Pages[0].DefLevels = true, lev, lev
			if !snap {
				p.Pages[0].Body = len(stored) - lev
			}
		}
		if p.Check() != nil {
			return // (the host refuses such pages before the kernels: column.Pages.Check)
		}
		s := agg.New(k.Family(), agg.Default)
		err := (&Backend{}).UpdatePages(context.Background(), p, &s)
		if err != nil {
			require.Contains(t, err.Error(), "row group 3: page 1: corrupt")
			require.Equal(t, int64(0), s.Count+s.NullCount, "the state is untouched")
			return
		}
		require.Equal(t, int64(rows), s.Count+s.NullCount)
		require.GreaterOrEqual(t, s.NullCount, int64(0))
		if !nullable {
			require.Equal(t, int64(0), s.NullCount)
		}
		if k == column.Bool {
			require.True(t, s.Sum.FitsUint64() && s.Sum[0] <= uint64(s.Count), "no more true values than values")
		}
	})
}

// TestPagesKernelsSample runs the kernels on the calibration's sample pages
// (pqdev.Sample, pages that share their bytes) of every class: the state
// is the CPU backend's over the values the pages hold.
func TestPagesKernelsSample(t *testing.T) {
	for c := range planner.NumPageClasses {
		c := planner.PageClass(c)
		t.Run(c.String(), func(t *testing.T) {
			p, err := pqdev.Sample(c.Snappy(), c.Dictionary(), 3, 2)
			require.NoError(t, err)
			got := agg.New(column.FamilySigned, agg.Default)
			require.NoError(t, (&Backend{}).UpdatePages(context.Background(), p, &got))
			v := pqdev.SampleView(c.Dictionary(), 3, 2)
			want := agg.New(column.FamilySigned, agg.Default)
			require.NoError(t, (&cpu.CPU{Threads: 1}).Update(context.Background(), []*column.View{v}, []*agg.State{&want}))
			assert.Equal(t, want, got)
			assert.Equal(t, int64(3*pqdev.SampleRows), got.Count)
		})
	}
}
