//go:build emu

package emugpu

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/golang/snappy"
	"github.com/stretchr/testify/require"
)

// stream builds a snappy block by hand, tag by tag (golang/snappy's encoder
// never emits copy-4 tags, literals of 3 or 4 length bytes or offsets past
// 64 KiB), and the bytes it decodes to, by the format's definition.
type stream struct {
	tags []byte // the tags, without the preamble
	out  []byte // what they decode to
}

// literal appends a literal tag with nb length bytes (0: the length in the
// tag, which needs len(b) <= 60).
func (s *stream) literal(b []byte, nb int) {
	x := uint32(len(b) - 1)
	if nb == 0 {
		s.tags = append(s.tags, byte(x<<2))
	} else {
		s.tags = append(s.tags, byte((59+nb)<<2))
		for i := 0; i < nb; i++ {
			s.tags = append(s.tags, byte(x>>(8*i)))
		}
	}
	s.tags = append(s.tags, b...)
	s.out = append(s.out, b...)
}

// copy appends a copy tag of the given kind (1, 2 or 4 offset bytes) and
// its bytes, copied one at a time as the format defines.
func (s *stream) copy(kind, offset, length int) {
	switch kind {
	case 1:
		s.tags = append(s.tags, byte(1|(length-4)<<2|(offset>>8)<<5), byte(offset))
	case 2:
		s.tags = append(s.tags, byte(2|(length-1)<<2), byte(offset), byte(offset>>8))
	case 4:
		s.tags = append(s.tags, byte(3|(length-1)<<2), byte(offset), byte(offset>>8), byte(offset>>16), byte(offset>>24))
	}
	for i := 0; i < length; i++ {
		s.out = append(s.out, s.out[len(s.out)-offset])
	}
}

// block is the stream with its preamble.
func (s *stream) block() []byte {
	return append(binary.AppendUvarint(nil, uint64(len(s.out))), s.tags...)
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// textLike is n bytes of words from a small vocabulary, as logs and CSV
// columns are.
func textLike(r *rand.Rand, n int) []byte {
	words := strings.Fields("the quick brown fox jumps over lazy dog error warning info request " +
		"response 200 404 500 GET POST user_id session latency_ms 0.25 12.5 arrow parquet column page")
	var b bytes.Buffer
	for b.Len() < n {
		b.WriteString(words[r.IntN(len(words))])
		if r.IntN(8) == 0 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.Bytes()[:n]
}

func periodic(r *rand.Rand, period, n int) []byte {
	p := randBytes(r, period)
	b := make([]byte, n)
	for i := range b {
		b[i] = p[i%period]
	}
	return b
}

// unsnap runs the blocks in one launch with the given out lengths and
// checks that no write left the outputs.
func unsnap(t testing.TB, blocks [][]byte, outLens []int, place Placement) ([][]byte, []int) {
	t.Helper()
	outs, codes, err := Unsnap(blocks, outLens, place)
	require.NoError(t, err)
	require.Len(t, outs, len(blocks))
	return outs, codes
}

type plain struct {
	name string
	data []byte
}

// encoded are inputs of many shapes, compressed by golang/snappy.
func encoded() []plain {
	r := rand.New(rand.NewPCG(1, 2))
	in := []plain{
		{"empty", nil},
		{"one byte", []byte{0x7f}},
		{"random 100 KiB", randBytes(r, 100<<10)},
		{"random 61 bytes", randBytes(r, 61)},
		{"random 300 bytes", randBytes(r, 300)},
		{"one byte run 1 MiB", bytes.Repeat([]byte{'a'}, 1<<20)},
		{"one byte run 100", bytes.Repeat([]byte{0}, 100)},
		{"text 200 KiB", textLike(r, 200<<10)},
		{"text 5000", textLike(r, 5000)},
	}
	for p := 2; p <= 64; p++ {
		in = append(in, plain{fmt.Sprintf("period %d", p), periodic(r, p, 3000+p*37)})
	}
	// random pieces and repeats of earlier pieces, literals of every length
	var mixed []byte
	for len(mixed) < 150<<10 {
		if len(mixed) > 100 && r.IntN(2) == 0 {
			at := r.IntN(len(mixed) - 1)
			mixed = append(mixed, mixed[at:at+1+r.IntN(min(len(mixed)-at-1, 300))]...)
		} else {
			mixed = append(mixed, randBytes(r, 1+r.IntN(200))...)
		}
	}
	// 64-bit integers of 37 significant bits: a short literal and a short
	// copy each (the tags that the warp batches, a lane each)
	ints := make([]byte, 0, 8<<15)
	for range 1 << 15 {
		ints = binary.LittleEndian.AppendUint64(ints, uint64(int64(r.Uint64())>>27))
	}
	in = append(in, plain{"int64 of 37 bits", ints})
	return append(in, plain{"mixed 150 KiB", mixed})
}

func TestUnsnapEncoded(t *testing.T) {
	in := encoded()
	blocks := make([][]byte, len(in))
	lens := make([]int, len(in))
	for i, p := range in {
		blocks[i] = snappy.Encode(nil, p.data)
		lens[i] = len(p.data)
	}
	outs, codes := unsnap(t, blocks, lens, GuardAfter)
	for i, p := range in {
		require.Equal(t, UnsnapOK, codes[i], p.name)
		require.True(t, bytes.Equal(p.data, outs[i]), "%s: output differs", p.name)
	}
}

// crafted are streams golang/snappy's encoder never writes: copy-4 tags
// (near and far, overlapping or not), literals with 3 and 4 length bytes,
// literal lengths written with more bytes than they need, and copy-1 and
// copy-2 at their limits.
func crafted() map[string]*stream {
	r := rand.New(rand.NewPCG(3, 4))
	out := map[string]*stream{}

	s := &stream{}
	s.literal(randBytes(r, 100<<10), 3)
	for len(s.out) < 200<<10 {
		s.copy(4, 90000+r.IntN(10000), 1+r.IntN(64))
		s.copy(4, 1+r.IntN(8), 1+r.IntN(64)) // overlapping
		s.literal(randBytes(r, 1+r.IntN(60)), 0)
	}
	out["copy-4 200 KiB"] = s

	s = &stream{}
	s.literal(randBytes(r, 70000), 3)
	for len(s.out) < 1<<20 {
		switch r.IntN(4) {
		case 0:
			s.copy(4, len(s.out)-r.IntN(64), 64) // back to the start
		case 1:
			s.copy(4, 1+r.IntN(len(s.out)), 1+r.IntN(64))
		case 2:
			s.copy(2, 1+r.IntN(min(len(s.out), 65535)), 1+r.IntN(64))
		default:
			s.literal(randBytes(r, 1+r.IntN(3000)), 2)
		}
	}
	out["copy-4 1 MiB"] = s

	s = &stream{}
	s.literal(randBytes(r, 5), 4) // 4 length bytes for a short literal
	s.literal(randBytes(r, 7), 1)
	s.literal(randBytes(r, 200), 4)
	s.literal(randBytes(r, 131), 2)
	s.literal(randBytes(r, 60), 0)
	s.literal(randBytes(r, 70000), 3)
	s.copy(1, 2047, 11)
	s.copy(1, 1, 4)
	s.copy(2, 3, 64)
	s.copy(2, 65535, 1)
	s.copy(4, 3403, 1)
	s.copy(4, 1, 64)
	out["tag limits"] = s

	// copy-4 tags whose offsets need their fourth byte (a header's fifth),
	// after short literals of every length, so that they start at every
	// byte of a window and at every alignment of the input
	s = &stream{}
	s.literal(randBytes(r, 1<<24+4096), 4)
	for len(s.out) < 1<<24+32<<10 {
		s.copy(4, 1<<24+r.IntN(4096), 1+r.IntN(64))
		s.literal(randBytes(r, 1+r.IntN(5)), 0)
	}
	out["copy-4 past 16 MiB"] = s

	// short tags whose copies read the bytes of the tags just before them
	// (in the same batch of lanes) and far back, in every proportion
	s = &stream{}
	s.literal(randBytes(r, 64), 1)
	for len(s.out) < 100<<10 {
		switch r.IntN(5) {
		case 0:
			s.literal(randBytes(r, 1+r.IntN(16)), 0)
		case 1:
			s.copy(1, 1+r.IntN(40), 4+r.IntN(8)) // into the batch, overlapping or not
		case 2:
			s.copy(2, 1+r.IntN(min(len(s.out), 65535)), 1+r.IntN(20))
		case 3:
			s.copy(2, 1+r.IntN(16), 17+r.IntN(48)) // a long copy from the batch
		default:
			s.literal(randBytes(r, 17+r.IntN(200)), 1)
		}
	}
	out["short tags"] = s

	// long literals at every alignment (the word path)
	s = &stream{}
	for a := 0; a < 8; a++ {
		s.literal(randBytes(r, a+1), 0)
		for n := 125; n < 140; n++ {
			s.literal(randBytes(r, n), 1)
		}
		s.literal(randBytes(r, 4096+a), 2)
	}
	out["long literals"] = s
	return out
}

func TestUnsnapCrafted(t *testing.T) {
	for _, place := range []Placement{GuardAfter, GuardBefore} {
		var names []string
		var blocks [][]byte
		var lens []int
		for name, s := range crafted() {
			names = append(names, name)
			blocks = append(blocks, s.block())
			lens = append(lens, len(s.out))
		}
		outs, codes := unsnap(t, blocks, lens, place)
		for i, name := range names {
			want := crafted()[name].out
			require.Equal(t, UnsnapOK, codes[i], name)
			require.True(t, bytes.Equal(want, outs[i]), "%s: output differs", name)
			// the oracle agrees with golang/snappy's decoder
			dec, err := snappy.Decode(nil, blocks[i])
			require.NoError(t, err, name)
			require.True(t, bytes.Equal(want, dec), name)
		}
	}
}

// hostile is a launch's worth of bad streams and the code each must give.
type hostile struct {
	names  []string
	blocks [][]byte
	lens   []int
	want   []int
}

func (h *hostile) add(name string, block []byte, outLen, want int) {
	h.names = append(h.names, name)
	h.blocks = append(h.blocks, block)
	h.lens = append(h.lens, outLen)
	h.want = append(h.want, want)
}

func (h *hostile) check(t *testing.T) {
	t.Helper()
	for _, place := range []Placement{GuardAfter, GuardBefore} {
		_, codes := unsnap(t, h.blocks, h.lens, place)
		for i := range h.blocks {
			require.Equal(t, h.want[i], codes[i], "%s (placement %d)", h.names[i], place)
		}
	}
}

func TestUnsnapTruncated(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	limits := crafted()["tag limits"]
	streams := map[string][]byte{
		"text":       snappy.Encode(nil, textLike(r, 400)),
		"period 3":   snappy.Encode(nil, periodic(r, 3, 200)),
		"random":     snappy.Encode(nil, randBytes(r, 70)),
		"tag limits": limits.block()[:200], // through the 4-length-byte literals
		"preamble":   snappy.Encode(nil, randBytes(r, 20000)),
	}
	h := &hostile{}
	for name, b := range streams {
		n, err := snappy.DecodedLen(b)
		require.NoError(t, err)
		if name == "tag limits" {
			n = len(limits.out)
		}
		for p := 0; p < len(b); p++ {
			_, err := snappy.Decode(nil, b[:p])
			require.Error(t, err, "golang/snappy decodes %s's prefix of %d bytes", name, p)
			h.add(fmt.Sprintf("%s[:%d]", name, p), b[:p], n, UnsnapCorrupt)
		}
	}
	h.check(t)
}

func TestUnsnapBadStreams(t *testing.T) {
	good := snappy.Encode(nil, []byte("hello, hello, hello, world"))
	lit := func(preamble uint64, tags ...byte) []byte {
		return append(binary.AppendUvarint(nil, preamble), tags...)
	}
	h := &hostile{}
	h.add("good", good, 26, UnsnapOK)
	h.add("out_len short", good, 25, UnsnapLength)
	h.add("out_len long", good, 27, UnsnapLength)
	h.add("out_len 0", good, 0, UnsnapLength)
	h.add("empty input", nil, 0, UnsnapCorrupt)
	h.add("preamble only, 0", []byte{0}, 0, UnsnapOK)
	h.add("preamble only, 5", []byte{5}, 5, UnsnapCorrupt)
	h.add("preamble unterminated", []byte{0x80, 0x80}, 0, UnsnapCorrupt)
	h.add("preamble 11 bytes", bytes.Repeat([]byte{0xff}, 11), 0, UnsnapCorrupt)
	h.add("preamble overflows 64 bits", append(bytes.Repeat([]byte{0xff}, 9), 0x02), 0, UnsnapCorrupt)
	h.add("preamble 2^32", lit(1<<32), 0, UnsnapCorrupt)
	h.add("preamble 2^32-1", lit(1<<32-1), 10, UnsnapLength)
	h.add("preamble 2^35-1", []byte{0xff, 0xff, 0xff, 0xff, 0x7f}, 10, UnsnapCorrupt)
	h.add("preamble padded", []byte{0x83, 0x80, 0x80, 0x00, 0x08, 'a', 'b', 'c'}, 3, UnsnapOK)
	h.add("literal past the input", lit(5, 4<<2, 'a', 'b'), 5, UnsnapCorrupt)
	h.add("literal past the output", lit(2, 2<<2, 'a', 'b', 'c'), 2, UnsnapCorrupt)
	h.add("literal length bytes truncated", lit(300, 61<<2, 0x2b), 300, UnsnapCorrupt)
	h.add("literal length 2^32", lit(10, 63<<2, 0xff, 0xff, 0xff, 0xff, 'a'), 10, UnsnapCorrupt)
	h.add("literal length 2^31", lit(10, 63<<2, 0xff, 0xff, 0xff, 0x7f, 'a'), 10, UnsnapCorrupt)
	h.add("copy offset 0", lit(6, 1<<2, 'a', 'b', 1|1<<2, 0), 6, UnsnapCorrupt)
	h.add("copy before the start", lit(6, 1<<2, 'a', 'b', 1, 3), 6, UnsnapCorrupt)
	h.add("copy first", lit(4, 1, 1), 4, UnsnapCorrupt)
	h.add("copy-2 far", lit(66, 1<<2, 'a', 'b', 2|63<<2, 0xff, 0xff), 66, UnsnapCorrupt)
	h.add("copy-4 2^32-1", lit(66, 1<<2, 'a', 'b', 3|63<<2, 0xff, 0xff, 0xff, 0xff), 66, UnsnapCorrupt)
	h.add("copy past the output", lit(5, 1<<2, 'a', 'b', 1, 1), 5, UnsnapCorrupt)
	h.add("copy-1 truncated", lit(6, 1<<2, 'a', 'b', 1), 6, UnsnapCorrupt)
	h.add("copy-2 truncated", lit(6, 1<<2, 'a', 'b', 2|3<<2, 1), 6, UnsnapCorrupt)
	h.add("copy-4 truncated", lit(6, 1<<2, 'a', 'b', 3|3<<2, 1, 0, 0), 6, UnsnapCorrupt)
	h.add("fewer bytes", lit(7, 1<<2, 'a', 'b', 1, 1), 7, UnsnapCorrupt)
	h.add("huge preamble, short out", lit(1<<31, 0), 1<<20, UnsnapLength)
	for i := range h.blocks {
		if len(h.blocks[i]) == 0 {
			continue
		}
		// the codes agree with golang/snappy (which has no out_len)
		want, err := snappy.Decode(nil, h.blocks[i])
		if h.want[i] == UnsnapLength {
			continue
		}
		if h.want[i] == UnsnapOK {
			require.NoError(t, err, h.names[i])
			require.Len(t, want, h.lens[i], h.names[i])
		} else {
			require.Error(t, err, h.names[i])
		}
	}
	h.check(t)
}

// TestUnsnapBitFlips flips bits of valid streams and checks unsnap_warp
// against golang/snappy on each: the same bytes where it decodes, an error
// where it does not.
func TestUnsnapBitFlips(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	srcs := [][]byte{
		snappy.Encode(nil, textLike(r, 3000)),
		snappy.Encode(nil, periodic(r, 5, 2000)),
		snappy.Encode(nil, randBytes(r, 500)),
		crafted()["tag limits"].block(),
	}
	var blocks [][]byte
	for _, src := range srcs {
		for k := 0; k < 150; k++ {
			b := bytes.Clone(src)
			for f := 0; f <= k%3; f++ {
				i := r.IntN(len(b))
				if f == 0 && k%4 == 0 {
					i = r.IntN(min(len(b), 8)) // the preamble and the first tags
				}
				b[i] ^= 1 << r.IntN(8)
			}
			blocks = append(blocks, b)
		}
	}
	differential(t, blocks)
}

// differential runs each block with out_len its preamble's length (or 0
// where it has none, or 1 MiB where it is larger: then the code must be
// kUnsnapLength) and checks the result against golang/snappy's.
func differential(t testing.TB, blocks [][]byte) {
	t.Helper()
	const limit = 1 << 20
	lens := make([]int, len(blocks))
	for i, b := range blocks {
		if n, err := snappy.DecodedLen(b); err == nil {
			lens[i] = min(n, limit+1)
		}
	}
	outs, codes := unsnap(t, blocks, lens, GuardAfter)
	for i, b := range blocks {
		n, err := snappy.DecodedLen(b)
		switch {
		case err != nil:
			require.Equal(t, UnsnapCorrupt, codes[i], "block %x: golang/snappy: %v", b, err)
		case n > limit:
			require.Equal(t, UnsnapLength, codes[i], "block %x", b)
		default:
			want, err := snappy.Decode(nil, b)
			if err != nil {
				require.Equal(t, UnsnapCorrupt, codes[i], "block %x: golang/snappy: %v", b, err)
			} else {
				require.Equal(t, UnsnapOK, codes[i], "block %x", b)
				require.True(t, bytes.Equal(want, outs[i]), "block %x: output differs", b)
			}
		}
	}
}

func FuzzUnsnap(f *testing.F) {
	r := rand.New(rand.NewPCG(9, 10))
	f.Add(snappy.Encode(nil, textLike(r, 300)))
	f.Add(snappy.Encode(nil, periodic(r, 3, 200)))
	f.Add(snappy.Encode(nil, randBytes(r, 150)))
	f.Add(crafted()["tag limits"].block()[:400])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		differential(t, [][]byte{b})
	})
}
