package dataset

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hybridWriter writes the RLE / bit-packed hybrid encoding, run by run as
// the test asks (the reference the decoder is checked against).
type hybridWriter struct {
	w   int
	out []byte
}

func (e *hybridWriter) rle(count int, v uint32) {
	e.out = binary.AppendUvarint(e.out, uint64(count)<<1)
	for i := 0; i < (e.w+7)/8; i++ {
		e.out = append(e.out, byte(v>>(8*i)))
	}
}

// packed writes vals (padded with zeros to a multiple of 8) bit-packed.
func (e *hybridWriter) packed(vals []uint32) {
	groups := (len(vals) + 7) / 8
	e.out = binary.AppendUvarint(e.out, uint64(groups)<<1|1)
	buf := make([]byte, groups*e.w)
	for i, v := range vals {
		for j := 0; j < e.w; j++ {
			if v>>j&1 != 0 {
				bit := i*e.w + j
				buf[bit/8] |= 1 << (bit % 8)
			}
		}
	}
	e.out = append(e.out, buf...)
}

// randomRuns encodes n random values below limit (of bit width w) in random
// runs and returns the encoding and the values.
func randomRuns(r *rand.Rand, w, n int, limit uint32) ([]byte, []uint32) {
	e := &hybridWriter{w: w}
	var vals []uint32
	for len(vals) < n {
		c := 1 + r.IntN(200)
		if r.IntN(2) == 0 {
			v := r.Uint32N(limit)
			e.rle(c, v)
			for i := 0; i < c; i++ {
				vals = append(vals, v)
			}
			continue
		}
		run := make([]uint32, c)
		for i := range run {
			run[i] = r.Uint32N(limit)
		}
		e.packed(run)
		vals = append(vals, run...)
		for len(run)%8 != 0 { // the padding decodes as zeros
			run = append(run, 0)
			vals = append(vals, 0)
		}
	}
	return e.out, vals[:n]
}

// The decoder agrees with the reference encoding for every bit width, in
// windows of any size, for counts, bitmaps and indices.
func TestHybridDecodesRandomRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, w := range []int{1, 2, 3, 5, 8, 9, 10, 11, 13, 15, 16, 17, 24, 31, 32} {
		limit := uint32(1<<min(w, 31) - 1)
		if w >= 32 {
			limit = 1<<31 - 1
		}
		data, vals := randomRuns(r, w, 5000, limit+1)
		// indices, in uneven windows
		var h hybrid
		h.reset(data, w)
		got := make([]int32, 0, len(vals))
		for len(got) < len(vals) {
			k := min(1+r.IntN(700), len(vals)-len(got))
			out := make([]int32, k)
			require.NoError(t, h.indices(int(limit)+1, out), "width %d", w)
			got = append(got, out...)
		}
		for i, v := range vals {
			require.Equal(t, int32(v), got[i], "width %d, value %d", w, i)
		}
		if w > 16 {
			continue // levels are at most 16 bits wide
		}
		maxDef := int16(min(limit, 1<<15-1))
		data, vals = randomRuns(r, w, 5000, uint32(maxDef)+1)
		h.reset(data, w)
		var c hybrid
		c.reset(data, w)
		for done := 0; done < len(vals); {
			k := min(1+r.IntN(900), len(vals)-done)
			valid := make([]byte, bitutil.BytesForBits(int64(k)))
			for i := range valid { // (the bits past k stay as they are)
				valid[i] = byte(r.Uint32())
			}
			last := valid[len(valid)-1]
			set, err := h.bitmap(maxDef, k, valid)
			require.NoError(t, err)
			if k%8 != 0 {
				require.Equal(t, last>>(k%8), valid[len(valid)-1]>>(k%8), "width %d, window of %d", w, k)
			}
			count, err := c.count(maxDef, k)
			require.NoError(t, err)
			want := 0
			for i := 0; i < k; i++ {
				isMax := vals[done+i] == uint32(maxDef)
				require.Equal(t, isMax, bitutil.BitIsSet(valid, i), "width %d, level %d", w, done+i)
				if isMax {
					want++
				}
			}
			assert.Equal(t, want, set)
			assert.Equal(t, want, count)
			done += k
		}
	}
}

// countUpTo stops right after the level that makes the values wanted, or
// at the rows it may read, for every bit width and run mix.
func TestHybridCountUpTo(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, w := range []int{1, 2, 3, 8} {
		maxDef := int16(1<<w - 1)
		data, vals := randomRuns(r, w, 20000, uint32(maxDef)+1)
		var h hybrid
		h.reset(data, w)
		for done := 0; done < len(vals); {
			m, want := 1+r.IntN(3000), 1+r.IntN(300)
			if r.IntN(4) == 0 {
				want = 1 + r.IntN(3)
			}
			m = min(m, len(vals)-done)
			rows, k, err := h.countUpTo(maxDef, m, want)
			require.NoError(t, err)
			wantRows, wantK := 0, 0
			for wantRows < m && wantK < want {
				if vals[done+wantRows] == uint32(maxDef) {
					wantK++
				}
				wantRows++
			}
			require.Equal(t, wantRows, rows, "width %d, level %d", w, done)
			require.Equal(t, wantK, k, "width %d, level %d", w, done)
			done += rows
		}
	}
}

// The examples of the Parquet specification (Encodings.md): 0 to 7 in 3
// bits, bit-packed LSB first in the hybrid encoding, MSB first in the
// deprecated BIT_PACKED one.
func TestHybridSpecExamples(t *testing.T) {
	var h hybrid
	h.reset([]byte{3<<1 | 1 /* one group */, 0b10001000, 0b11000110, 0b11111010}, 3)
	out := make([]int32, 8)
	require.NoError(t, h.indices(8, out))
	assert.Equal(t, []int32{0, 1, 2, 3, 4, 5, 6, 7}, out)

	lsb := msbToLSB([]byte{0b00000101, 0b00111001, 0b01110111}, 3, 8, nil)
	assert.Equal(t, []byte{0b10001000, 0b11000110, 0b11111010}, lsb)
	h.resetPacked(lsb, 3, 8)
	require.NoError(t, h.indices(8, out))
	assert.Equal(t, []int32{0, 1, 2, 3, 4, 5, 6, 7}, out)

	// BIT_PACKED definition levels of width 1: 1 0 1 1 0 0 0 1 | 1
	lsb = msbToLSB([]byte{0b10110001, 0b10000000}, 1, 9, nil)
	h.resetPacked(lsb, 1, 9)
	valid := make([]byte, 2)
	n, err := h.bitmap(1, 9, valid)
	require.NoError(t, err)
	assert.Equal(t, 5, n)
	assert.Equal(t, []byte{0b10001101, 1}, valid)
}

// A last bit-packed group cut short decodes as far as it goes, as other
// readers do.
func TestHybridShortLastGroup(t *testing.T) {
	var h hybrid
	// two groups of width 8 announced, 11 values there
	h.reset([]byte{2<<1 | 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 8)
	out := make([]int32, 11)
	require.NoError(t, h.indices(100, out))
	assert.Equal(t, []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, out)
	require.ErrorIs(t, h.indices(100, make([]int32, 1)), errShortRuns)
}

// Corrupt encodings are errors, never reads out of bounds.
func TestHybridErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		w    int
		want string
	}{
		{"nothing", nil, 3, "the encoded values end early (no run header)"},
		{"cut header", []byte{0x80}, 3, "the encoded values end early (no run header)"},
		{"cut value", []byte{4 << 1}, 9, "the encoded values end early (run value cut)"},
		{"empty run", []byte{0, 1}, 1, "a run of no values"},
		{"empty packed run", []byte{1}, 1, "a bit-packed run of no values"},
		{"value too wide", []byte{4 << 1, 8}, 3, "run value 8 does not fit 3 bits"},
		{"bit width", []byte{4 << 1, 0, 0, 0, 0, 0}, 33, "bit width 33 not in [0, 32]"},
		{"packed bytes missing", []byte{1<<1 | 1}, 3, "the encoded values end early (bit-packed run cut)"},
		{"huge run", []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}, 8, "the encoded values end early (bit-packed run cut)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h hybrid
			h.reset(tc.data, tc.w)
			assert.EqualError(t, h.indices(1<<30, make([]int32, 10)), tc.want)
		})
	}
	var h hybrid
	h.reset([]byte{4 << 1, 5}, 3)
	assert.EqualError(t, h.indices(5, make([]int32, 4)), "dictionary index 5 not in [0, 5)")
	h.reset([]byte{1<<1 | 1, 0b11111111, 0, 0}, 3) // 7 0 0 ...
	assert.EqualError(t, h.indices(7, make([]int32, 8)), "dictionary index 7 not in [0, 7)")
	h.reset([]byte{4 << 1, 3}, 2)
	_, err := h.count(2, 4)
	assert.EqualError(t, err, "definition level 3 above the maximum 2")
	h.reset([]byte{4 << 1, 3}, 2)
	_, err = h.bitmap(2, 4, make([]byte, 1))
	assert.EqualError(t, err, "definition level 3 above the maximum 2")
	h.reset([]byte{1<<1 | 1, 0b11111111, 0}, 2) // 3 3 3 3 0 0 0 0
	_, err = h.count(2, 8)
	assert.EqualError(t, err, "definition level 3 above the maximum 2")
	// one-bit levels (countUpTo reads their common runs itself): a value
	// that does not fit, empty runs and a cut bit-packed run say so
	for data, want := range map[string]string{
		"\x08\x02":     "run value 2 does not fit 1 bits",
		"\x00\x01":     "a run of no values",
		"\x01\xff":     "a bit-packed run of no values",
		"\x05\xff":     "", // two groups, one there: read as far as it goes
		"\x08\x01\x03": "", // four levels of 1, then a cut header
	} {
		h.reset([]byte(data), 1)
		rows, k, err := h.countUpTo(1, 4, 4)
		if want != "" {
			assert.ErrorContains(t, err, want, "%q", data)
			continue
		}
		require.NoError(t, err, "%q", data)
		assert.Equal(t, 4, rows, "%q", data)
		assert.Equal(t, 4, k, "%q", data)
	}
	// a huge repeat count is capped, not overflowed
	h.reset([]byte{0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 1}, 1)
	n, err := h.count(1, 1000)
	require.NoError(t, err)
	assert.Equal(t, 1000, n)
}

func TestLevelBitWidth(t *testing.T) {
	for max, want := range map[int16]int{0: 0, 1: 1, 2: 2, 3: 2, 4: 3, 7: 3, 8: 4, 255: 8, 256: 9, 1<<15 - 1: 15} {
		assert.Equal(t, want, levelBitWidth(max), max)
	}
}

// spreadValues puts the dense values at the valid rows and leaves the
// others as they were, at every density of nulls (words of none, of few,
// of many, of all).
func TestSpreadValues(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, nulls := range []float64{0.01, 0.05, 0.12, 0.25, 0.5, 0.95} {
		for _, m := range []int{1, 7, 63, 64, 65, 128, 200, 1000, 4099} {
			valid := make([]byte, bitutil.BytesForBits(int64(m)))
			var dense []uint64
			want, got := make([]uint64, m), make([]uint64, m)
			for i := 0; i < m; i++ {
				if r.Float64() >= nulls || (m >= 128 && i < 64) { // a full word too
					bitutil.SetBit(valid, i)
					want[i] = r.Uint64()
					dense = append(dense, want[i])
				} else {
					want[i] = uint64(i) // a null row's slot is left as it was
					got[i] = uint64(i)
				}
			}
			spreadValues(dense, valid, m, got)
			assert.Equal(t, want, got, "%d rows, %.0f%% nulls", m, 100*nulls)
		}
	}
}

// spreadValues gives the same rows with its AVX-512 words (where the CPU
// has them: spreadAVX512) and without, for values of 2, 4 and 8 bytes, at
// every density of nulls, whole words or not.
func TestSpreadValuesWidths(t *testing.T) {
	spreadWidth[uint16](t)
	spreadWidth[uint32](t)
	spreadWidth[uint64](t)
}

func spreadWidth[T uint16 | uint32 | uint64](t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	simd := spreadAVX512
	defer func() { spreadAVX512 = simd }()
	for _, nulls := range []float64{0, 0.01, 0.05, 0.5, 0.95, 1} {
		for _, m := range []int{0, 1, 15, 63, 64, 65, 127, 128, 129, 1000, 4099} {
			valid := make([]byte, bitutil.BytesForBits(int64(m)))
			var dense []T
			want, before := make([]T, m), make([]T, m)
			for i := range m {
				before[i] = T(r.Uint64())
				want[i] = before[i] // a null row's slot is left as it was
				if r.Float64() >= nulls {
					bitutil.SetBit(valid, i)
					want[i] = T(r.Uint64())
					dense = append(dense, want[i])
				}
			}
			for _, on := range []bool{false, true} {
				spreadAVX512 = simd && on
				got := slices.Clone(before)
				spreadValues(dense, valid, m, got)
				assert.Equal(t, want, got, "%T, %d rows, %.0f%% nulls, AVX-512 %v", T(0), m, 100*nulls, spreadAVX512)
			}
		}
	}
}

// spreadWords stops at the first step with more valid rows than values
// are left, having read no value past them: the rows of the steps before
// are spread, the others left, and it reports nothing spread.
func TestSpreadWordsTooFewValues(t *testing.T) {
	const m, have = 128, 100
	valid := bytes.Repeat([]byte{0xff}, m/8)
	backing := make([]uint64, m)
	for i := range backing {
		backing[i] = uint64(i + 1)
		if i >= have {
			backing[i] = 1 << 63 // past the values: never read
		}
	}
	out := make([]uint64, m)
	words, took := spreadWords(backing[:have], valid, m, out)
	assert.Equal(t, 0, words)
	assert.Equal(t, 0, took)
	for i, x := range out {
		assert.NotEqual(t, uint64(1<<63), x, "row %d", i)
		if i >= have/8*8 {
			assert.Zero(t, x, "row %d: past the last whole step", i)
		}
	}
}

// BenchmarkSpreadValues spreads a page's worth of 8-byte values over rows
// of a few densities of nulls.
func BenchmarkSpreadValues(b *testing.B) {
	const m = 1 << 16
	for _, nulls := range []float64{0.01, 0.05, 0.12, 0.25, 0.5} {
		b.Run(fmt.Sprintf("nulls=%.0f%%", 100*nulls), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			valid := make([]byte, m/8)
			var dense []uint64
			for i := 0; i < m; i++ {
				if r.Float64() >= nulls {
					bitutil.SetBit(valid, i)
					dense = append(dense, uint64(i))
				}
			}
			out := make([]uint64, m)
			b.SetBytes(8 * m)
			for range b.N {
				spreadValues(dense, valid, m, out)
			}
		})
	}
}

// Any bytes decode to values or an error, never to a panic or a read out
// of bounds.
func FuzzHybrid(f *testing.F) {
	f.Add([]byte{3<<1 | 1, 0b10001000, 0b11000110, 0b11111010}, uint8(3), uint16(8))
	f.Add([]byte{4 << 1, 1, 2<<1 | 1, 0xFF, 0x0F}, uint8(1), uint16(20))
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 7}, uint8(8), uint16(300))
	f.Fuzz(func(t *testing.T, data []byte, w uint8, n uint16) {
		var h hybrid
		h.reset(data, int(w%40))
		_ = h.indices(1<<20, make([]int32, n))
		if lw := int(w % 17); lw > 0 {
			maxDef := int16(1<<lw - 1)
			h.reset(data, lw)
			_, _ = h.count(maxDef, int(n))
			h.reset(data, lw)
			_, _ = h.bitmap(maxDef, int(n), make([]byte, bitutil.BytesForBits(int64(n))))
			// countUpTo (its own reading of one-bit runs) against count.
			h.reset(data, lw)
			if rows, k, err := h.countUpTo(maxDef, int(n), 1+int(n)/3); err == nil {
				var c hybrid
				c.reset(data, lw)
				want, err := c.count(maxDef, rows)
				require.NoError(t, err)
				require.Equal(t, want, k)
			}
			if len(data)*8 >= int(n)*lw {
				h.resetPacked(msbToLSB(data, lw, int(n), nil), lw, int(n))
				_, _ = h.count(maxDef, int(n))
			}
		}
	})
}

// gatherRows puts dictionary entries at the valid rows, in order, for
// every width: the typed paths (4 and 8 bytes) as the bytewise one.
func TestGatherRows(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, w := range []int{2, 4, 8, 16} {
		for _, m := range []int{1, 63, 64, 65, 200, 1000} {
			const n = 37
			dict := make([]byte, n*w)
			for i := range dict {
				dict[i] = byte(r.Uint32())
			}
			valid := make([]byte, bitutil.BytesForBits(int64(m)))
			var idx []int32
			want := make([]byte, m*w)
			for i := range m {
				if r.IntN(4) != 0 || (m >= 128 && i < 64) {
					bitutil.SetBit(valid, i)
					j := int32(r.IntN(n))
					idx = append(idx, j)
					copy(want[i*w:], dict[int(j)*w:int(j+1)*w])
				}
			}
			got := make([]byte, m*w)
			require.NoError(t, gatherRows(dict, n, idx, w, valid, m, got))
			assert.Equal(t, want, got, "width %d, %d rows", w, m)
			if len(idx) > 0 {
				idx[len(idx)-1] = n // (out of the dictionary)
				require.Error(t, gatherRows(dict, n, idx, w, valid, m, got))
			}
		}
	}
}

// rowBuffers hands a freed buffer to the next allocation of its size, and
// keeps at most rowBuffersKept bytes.
func TestRowBuffers(t *testing.T) {
	var a rowBuffers
	b := a.Allocate(100)
	require.Len(t, b, 100)
	b[0] = 7
	a.Free(b)
	c := a.Allocate(100)
	require.Equal(t, byte(7), c[0]) // (the same buffer, not zeroed)
	require.Len(t, a.Allocate(100), 100)
	d := a.Reallocate(200, c)
	require.Len(t, d, 200)
	require.Equal(t, byte(7), d[0])
	require.Equal(t, 100, a.kept) // (c, freed by Reallocate)
	big := make([]byte, rowBuffersKept)
	a.Free(big)
	require.Equal(t, 100, a.kept)
}

// BenchmarkHybridBitmap decodes the definition levels of a column of 5%
// nulls at random into validity bitmaps, a page window at a time, encoded
// as Parquet writers encode them: RLE runs of 8 or more equal levels,
// bit-packed groups of 8 between them.
func BenchmarkHybridBitmap(b *testing.B) {
	r := rand.New(rand.NewPCG(11, 13))
	const n = 1 << 20
	levels := make([]uint32, n)
	for i := range levels {
		if r.IntN(20) != 0 {
			levels[i] = 1
		}
	}
	e := hybridWriter{w: 1}
	var pending []uint32
	for i := 0; i < n; {
		j := i
		for j < n && levels[j] == levels[i] {
			j++
		}
		if j-i >= 8 && len(pending)%8 == 0 {
			if len(pending) > 0 {
				e.packed(pending)
				pending = pending[:0]
			}
			e.rle(j-i, levels[i])
			i = j
			continue
		}
		pending = append(pending, levels[i])
		i++
	}
	if len(pending) > 0 {
		e.packed(pending)
	}
	valid := make([]byte, pageWindow/8)
	b.SetBytes(n / 8)
	for b.Loop() {
		var h hybrid
		h.reset(e.out, 1)
		for done := 0; done < n; done += pageWindow {
			if _, err := h.bitmap(1, pageWindow, valid); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkHybridIndices decodes 1M dictionary indices of 10 entries (bit
// width 4) in bit-packed runs of 504, as Arrow C++ writes them.
func BenchmarkHybridIndices(b *testing.B) {
	for _, w := range []int{4, 10} {
		b.Run(fmt.Sprintf("w=%d", w), func(b *testing.B) {
			r := rand.New(rand.NewPCG(17, 19))
			const n = 1 << 20
			entries := uint32(1)<<w - 6
			e := hybridWriter{w: w}
			for i := 0; i < n; i += 504 {
				run := make([]uint32, min(504, n-i))
				for j := range run {
					run[j] = r.Uint32N(entries)
				}
				e.packed(run)
			}
			out := make([]int32, pageWindow)
			b.SetBytes(n * 4)
			for b.Loop() {
				var h hybrid
				h.reset(e.out, w)
				for done := 0; done < n; done += pageWindow {
					if err := h.indices(int(entries), out); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
