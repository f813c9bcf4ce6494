package snappy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	ref "github.com/golang/snappy"
	"github.com/stretchr/testify/require"
)

// refDecode runs golang/snappy's Decode. It declines (ok=false) when the
// header claims more than 1 MiB and more than the stream could possibly
// produce: golang/snappy would allocate the claimed length (up to 4 GiB)
// before rejecting the stream, and the caller then only checks that Decode
// rejects it too.
func refDecode(dst, src []byte) (out []byte, err error, ok bool) {
	n, err := ref.DecodedLen(src)
	if err == nil && n > 1<<20 && uint64(n) > uint64(len(src))*maxExpansion {
		return nil, nil, false
	}
	out, err = ref.Decode(dst, src)
	return out, err, true
}

// checkSame asserts that Decode agrees with golang/snappy on src, for a
// nil dst, an exactly sized one and a larger one.
func checkSame(t testing.TB, src []byte) {
	t.Helper()
	want, wantErr, ok := refDecode(nil, src)
	if !ok {
		got, err := Decode(nil, src)
		require.Error(t, err)
		require.Nil(t, got)
		return
	}
	n, lerr := DecodedLen(src)
	rn, rerr := ref.DecodedLen(src)
	require.Equal(t, rerr == nil, lerr == nil)
	require.Equal(t, rn, n)

	dsts := [][]byte{nil}
	if wantErr == nil {
		dsts = append(dsts, make([]byte, len(want)), make([]byte, len(want)+100))
		if len(want) > 0 {
			dsts = append(dsts, make([]byte, len(want)-1))
		}
	}
	for _, dst := range dsts {
		got, err := Decode(dst, src)
		if wantErr != nil {
			require.Error(t, err, "golang/snappy: %v", wantErr)
			if wantErr == ref.ErrTooLarge {
				require.ErrorIs(t, err, ErrTooLarge)
			}
			require.Nil(t, got)
			continue
		}
		require.NoError(t, err)
		require.True(t, bytes.Equal(want, got), "decoded bytes differ (len %d vs %d)", len(want), len(got))
		if len(dst) >= len(want) && len(want) > 0 {
			require.Equal(t, &dst[0], &got[0], "dst not reused")
		}
	}
}

func roundTrip(t testing.TB, raw []byte) {
	t.Helper()
	enc := ref.Encode(nil, raw)
	got, err := Decode(nil, enc)
	require.NoError(t, err)
	require.True(t, bytes.Equal(raw, got), "round trip of %d bytes", len(raw))
	checkSame(t, enc)
}

// Column shapes: 8-byte and 4-byte values as Parquet pages hold them.
func columns(n int) map[string][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	m := map[string][]byte{}
	var b []byte
	for range n {
		b = binary.LittleEndian.AppendUint64(b, uint64(1_700_000_000_000+r.Int64N(31_536_000_000)))
	}
	m["ts_ms"] = b
	b = nil
	for range n {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(float64(r.IntN(100_000))/100))
	}
	m["price"] = b
	b = nil
	for range n {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(20+10*r.NormFloat64()))
	}
	m["temp"] = b
	b = nil
	for range 2 * n {
		b = binary.LittleEndian.AppendUint32(b, uint32(r.Int32N(101_000)-1000))
	}
	m["qty"] = b
	b = nil
	for range 2 * n {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(r.Float32()))
	}
	m["ratio"] = b
	b = nil
	for range n {
		b = binary.LittleEndian.AppendUint64(b, uint64(r.Int64N(4_000_000_000_000_001)-1_000_000_000_000_000))
	}
	m["amount"] = b
	return m
}

func sizes() []int {
	s := []int{}
	for i := 0; i <= 300; i++ {
		s = append(s, i)
	}
	return append(s, 511, 512, 513, 1000, 4095, 4096, 65535, 65536, 65537, 100_000, 1<<20, 3<<20+7)
}

func TestRoundTripRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range sizes() {
		// Incompressible, low-entropy and mixed data.
		raw := make([]byte, n)
		for i := range raw {
			raw[i] = byte(r.Uint32())
		}
		roundTrip(t, raw)
		for i := range raw {
			raw[i] = byte(r.IntN(4))
		}
		roundTrip(t, raw)
		for i := range raw {
			if r.IntN(3) == 0 {
				raw[i] = byte(r.Uint32())
			} else if i > 0 {
				raw[i] = raw[i-1-r.IntN(min(i, 70))]
			}
		}
		roundTrip(t, raw)
	}
}

func TestRoundTripColumns(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 100, 1000, 128 * 1024} {
		for name, raw := range columns(n) {
			t.Run(fmt.Sprint(name, n), func(t *testing.T) { roundTrip(t, raw) })
		}
	}
}

func TestRoundTripRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 5, 63, 64, 65, 100, 4096, 1 << 20} {
		roundTrip(t, make([]byte, n))
		var raw []byte
		for len(raw) < n {
			raw = append(raw, bytes.Repeat([]byte{byte(r.Uint32())}, 1+r.IntN(200))...)
		}
		roundTrip(t, raw)
	}
}

// lit appends a literal operation (any length, all header forms).
func lit(b, data []byte) []byte {
	n := len(data) - 1
	switch {
	case n < 60:
		b = append(b, byte(n<<2))
	case n < 1<<8:
		b = append(b, 60<<2, byte(n))
	case n < 1<<16:
		b = append(b, 61<<2, byte(n), byte(n>>8))
	case n < 1<<24:
		b = append(b, 62<<2, byte(n), byte(n>>8), byte(n>>16))
	default:
		b = append(b, 63<<2, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
	}
	return append(b, data...)
}

// cp appends a copy operation of the given kind (1, 2 or 4 offset bytes).
func cp(b []byte, kind, offset, length int) []byte {
	switch kind {
	case 1:
		return append(b, byte(1|(length-4)<<2|offset>>8<<5), byte(offset))
	case 2:
		return append(b, byte(2|(length-1)<<2), byte(offset), byte(offset>>8))
	default:
		return append(b, byte(3|(length-1)<<2), byte(offset), byte(offset>>8), byte(offset>>16), byte(offset>>24))
	}
}

func withHeader[T int | uint64](n T, body []byte) []byte {
	return append(binary.AppendUvarint(nil, uint64(n)), body...)
}

// expected decodes body with the simplest possible interpreter of valid
// streams; used to build test cases that the encoder never emits.
// checkBody checks that Decode gives expected(body) for body with its
// length header, and agrees with golang/snappy on it; it returns the
// expected bytes.
func checkBody(t *testing.T, body []byte) []byte {
	t.Helper()
	want := expected(body)
	src := withHeader(len(want), body)
	got, err := Decode(nil, src)
	require.NoError(t, err)
	require.Equal(t, want, got)
	checkSame(t, src)
	return want
}

func expected(body []byte) []byte {
	var out []byte
	s := 0
	for s < len(body) {
		tag := body[s]
		var off, n int
		switch tag & 3 {
		case 0:
			x := int(tag >> 2)
			s++
			if x >= 60 {
				k := x - 59
				x = 0
				for i := 0; i < k; i++ {
					x |= int(body[s+i]) << (8 * i)
				}
				s += k
			}
			out = append(out, body[s:s+x+1]...)
			s += x + 1
			continue
		case 1:
			n, off = 4+int(tag>>2&7), int(tag&0xe0)<<3|int(body[s+1])
			s += 2
		case 2:
			n, off = 1+int(tag>>2), int(body[s+1])|int(body[s+2])<<8
			s += 3
		case 3:
			n, off = 1+int(tag>>2), int(binary.LittleEndian.Uint32(body[s+1:]))
			s += 5
		}
		for range n {
			out = append(out, out[len(out)-off])
		}
	}
	return out
}

// TestEveryOffsetAndLength builds streams with copies of every offset
// 1..70 and every length 1..64 in all three copy forms, between literals,
// with enough bytes around them that the fast loop runs.
func TestEveryOffsetAndLength(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	rnd := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	for _, kind := range []int{1, 2, 4} {
		var body []byte
		body = lit(body, rnd(100))
		for off := 1; off <= 70; off++ {
			for n := 1; n <= 64; n++ {
				if kind == 1 && (n < 4 || n > 11) {
					continue
				}
				body = cp(body, kind, off, n)
				body = lit(body, rnd(1+r.IntN(20)))
			}
		}
		body = lit(body, rnd(100))
		want := checkBody(t, body)
		// Truncations near the end, with the full length in the header.
		for cut := len(body) - 300; cut < len(body); cut++ {
			checkSame(t, withHeader(len(want), body[:cut]))
		}
	}
}

func TestLongLiterals(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{1, 59, 60, 61, 62, 64, 65, 100, 255, 256, 257, 1000, 65535, 65536, 65537, 1 << 17, 1<<24 + 3} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		body := lit(nil, data)
		body = cp(body, 2, min(n, 10), 30)
		body = lit(body, data[:min(n, 70)])
		checkBody(t, body)
		// The 4-byte literal header form for a short literal.
		body = append([]byte{63 << 2, byte(n - 1), byte((n - 1) >> 8), byte((n - 1) >> 16), byte((n - 1) >> 24)}, data...)
		checkSame(t, withHeader(n, body))
	}
}

func TestCorrupt(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	filler := make([]byte, 200)
	for i := range filler {
		filler[i] = byte(r.Uint32())
	}
	cases := map[string][]byte{
		"empty":          {},
		"header only":    {5},
		"bad varint":     {0x80, 0x80, 0x80, 0x80, 0x80, 0x80},
		"varint 2^32":    {0x80, 0x80, 0x80, 0x80, 0x10},
		"varint max32":   {0xff, 0xff, 0xff, 0xff, 0x0f},
		"varint huge ok": withHeader(uint64(0xffffffff), lit(nil, filler)),
		"zero, extra":    withHeader(0, []byte{0}),
		"lit past end":   withHeader(10, []byte{9 << 2, 1, 2}),
		"lit61 trunc":    withHeader(10, []byte{61 << 2, 1}),
		"lit63 huge":     withHeader(10, []byte{63 << 2, 0xff, 0xff, 0xff, 0xff, 1}),
		"copy1 trunc":    withHeader(10, append(lit(nil, filler[:5]), 1)),
		"copy2 trunc":    withHeader(10, append(lit(nil, filler[:5]), 2, 1)),
		"copy4 trunc":    withHeader(10, append(lit(nil, filler[:5]), 3, 1, 0, 0)),
		"offset 0":       withHeader(15, cp(lit(nil, filler[:5]), 2, 0, 10)),
		"offset past":    withHeader(15, cp(lit(nil, filler[:5]), 2, 6, 10)),
		"offset4 past":   withHeader(15, cp(lit(nil, filler[:5]), 4, 1<<30, 10)),
		"offset4 neg":    withHeader(15, append(lit(nil, filler[:5]), 3|9<<2, 0, 0, 0, 0x80)),
		"copy first":     withHeader(4, cp(nil, 1, 1, 4)),
		"copy too long":  withHeader(14, cp(lit(nil, filler[:5]), 2, 1, 10)),
		"too short hdr":  withHeader(199, lit(nil, filler)),
		"too long hdr":   withHeader(201, lit(nil, filler)),
	}
	// Long valid streams with a bad operation in the middle, where the fast
	// loop is running.
	for _, off := range []int{0, 1, 7, 8, 300, 301, 400} {
		body := lit(nil, filler)
		body = cp(body, 2, 8, 20)
		body = lit(body, filler[:40])
		body = cp(body, 2, off, 64)
		body = lit(body, filler)
		cases[fmt.Sprint("mid offset ", off)] = withHeader(len(filler)*2+20+40+64, body)
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) { checkSame(t, src) })
	}
	require.Error(t, func() error { _, err := Decode(nil, []byte{0x80, 0x80, 0x80, 0x80, 0x10}); return err }())
}

// TestMutations checks every single-byte change (and every truncation) of
// a few encoded streams against golang/snappy.
func TestMutations(t *testing.T) {
	cols := columns(300)
	inputs := [][]byte{cols["ts_ms"], cols["price"], cols["qty"][:500]}
	r := rand.New(rand.NewPCG(13, 14))
	text := make([]byte, 2000)
	for i := range text {
		if i > 10 && r.IntN(4) != 0 {
			text[i] = text[i-1-r.IntN(10)]
		} else {
			text[i] = byte('a' + r.IntN(26))
		}
	}
	inputs = append(inputs, text)
	vals := []byte{0, 1, 2, 3, 4, 7, 8, 0x3f, 0x40, 0x7f, 0x80, 0xef, 0xf0, 0xfc, 0xfd, 0xfe, 0xff}
	for _, raw := range inputs {
		enc := ref.Encode(nil, raw)
		for cut := 0; cut < len(enc); cut++ {
			checkSame(t, enc[:cut])
		}
		mut := bytes.Clone(enc)
		for i := range enc {
			for _, v := range append(vals, enc[i]^1, enc[i]^0x20, enc[i]+4, enc[i]-4) {
				mut[i] = v
				checkSame(t, mut)
			}
			mut[i] = enc[i]
		}
	}
}

// TestNoOverrun decodes into dst and from src slices that sit in the
// middle of guarded buffers and checks that the guard bytes are untouched.
func TestNoOverrun(t *testing.T) {
	cols := columns(2000)
	r := rand.New(rand.NewPCG(15, 16))
	for _, raw := range [][]byte{cols["ts_ms"], cols["price"], cols["amount"], make([]byte, 5000)} {
		enc := ref.Encode(nil, raw)
		for trial := 0; trial < 200; trial++ {
			src := bytes.Clone(enc)
			if trial > 0 {
				src[r.IntN(len(src))] = byte(r.Uint32())
			}
			n, err := DecodedLen(src)
			if err != nil || n > 1<<20 {
				continue
			}
			sbuf := make([]byte, len(src)+256)
			for i := range sbuf {
				sbuf[i] = 0xa5
			}
			copy(sbuf[128:], src)
			dbuf := make([]byte, n+256)
			for i := range dbuf {
				dbuf[i] = 0x5a
			}
			_, _ = Decode(dbuf[128:128+n:128+n], sbuf[128:128+len(src):128+len(src)])
			for i := 0; i < 128; i++ {
				require.Equal(t, byte(0x5a), dbuf[i])
				require.Equal(t, byte(0x5a), dbuf[128+n+i])
			}
			checkSame(t, src)
		}
	}
}

func FuzzDecode(f *testing.F) {
	cols := columns(40)
	for _, raw := range cols {
		f.Add(ref.Encode(nil, raw))
	}
	f.Add(ref.Encode(nil, make([]byte, 1000)))
	f.Add(ref.Encode(nil, []byte("hello, hello, hello, hello world; hello hello")))
	f.Add([]byte{})
	f.Add([]byte{0x80, 0x80, 0x80, 0x80, 0x10})
	f.Add(withHeader(15, cp(lit(nil, []byte("abcde")), 2, 6, 10)))
	f.Add(withHeader(70, cp(lit(nil, []byte("abcdefgh")), 4, 8, 62)))
	f.Fuzz(func(t *testing.T, src []byte) {
		checkSame(t, src)
	})
}

func BenchmarkDecode(b *testing.B) {
	cols := columns(128 * 1024)
	for _, name := range []string{"ts_ms", "price", "temp", "qty", "ratio", "amount"} {
		raw := cols[name]
		enc := ref.Encode(nil, raw)
		dst := make([]byte, len(raw))
		b.Run(name+"/ours", func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, err := Decode(dst, enc); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/golang", func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, err := ref.Decode(dst, enc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeOther covers shapes the fast loop handles on its slower
// paths: runs (copies with offset 1) and short repeated patterns.
func BenchmarkDecodeOther(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	runs := make([]byte, 0, 1<<20)
	for len(runs) < 1<<20 {
		v := byte(r.Uint32())
		for n := 1 + r.IntN(40); n > 0; n-- {
			runs = append(runs, v)
		}
	}
	pat := make([]byte, 0, 1<<20)
	for len(pat) < 1<<20 {
		p := []byte{byte(r.Uint32()), byte(r.Uint32()), byte(r.Uint32())}
		for n := r.IntN(30); n > 0; n-- {
			pat = append(pat, p...)
		}
	}
	inputs := []struct {
		name string
		raw  []byte
	}{{"zeros", make([]byte, 1<<20)}, {"runs", runs}, {"pat3", pat}}
	for _, in := range inputs {
		enc := ref.Encode(nil, in.raw)
		dst := make([]byte, len(in.raw))
		b.Run(in.name+"/ours", func(b *testing.B) {
			b.SetBytes(int64(len(in.raw)))
			for b.Loop() {
				if _, err := Decode(dst, enc); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(in.name+"/golang", func(b *testing.B) {
			b.SetBytes(int64(len(in.raw)))
			for b.Loop() {
				if _, err := ref.Decode(dst, enc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
