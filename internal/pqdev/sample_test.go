package pqdev

import (
	"encoding/binary"
	"testing"

	"github.com/golang/snappy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sampleClasses are the four kinds of sample pages.
var sampleClasses = []struct {
	name         string
	snappy, dict bool
}{{"plain", false, false}, {"snappy", true, false}, {"dictionary", false, true}, {"snappy dictionary", true, true}}

// TestSamplePages decodes the sample pages of every class on the host:
// each page's body is its levels (one run of ones) and then its values, or
// its indices, whose dictionary values are SampleValue's.
func TestSamplePages(t *testing.T) {
	for _, c := range sampleClasses {
		t.Run(c.name, func(t *testing.T) {
			p, err := Sample(c.snappy, c.dict, 5, 2)
			require.NoError(t, err)
			require.NoError(t, p.Check())
			require.Len(t, p.Pages, 5)
			at := func(k int) []byte {
				return p.Data[p.Pages[k].Offset : p.Pages[k].Offset+int64(p.Pages[k].Stored)]
			}
			assert.Equal(t, at(0), at(2), "page 2 repeats page 0")
			assert.NotEqual(t, at(0), at(1))
			assert.Equal(t, p.Pages[0].Offset, p.Pages[2].Offset, "page 2 shares page 0's bytes")
			l, err := Plan(p)
			require.NoError(t, err)
			if c.snappy {
				assert.Equal(t, 5, l.Snappy)
			}
			for k, pg := range p.Pages {
				body := p.Data[pg.Offset : pg.Offset+int64(pg.Stored)]
				if c.snappy {
					body, err = snappy.Decode(nil, body)
					require.NoError(t, err)
				}
				require.Len(t, body, pg.Body)
				require.Equal(t, SampleBody(c.dict), pg.Body)
				n := binary.LittleEndian.Uint32(body)
				run, m := binary.Uvarint(body[4:])
				assert.Equal(t, uint64(SampleRows<<1), run, "an RLE run of every row")
				assert.Equal(t, byte(1), body[4+m], "of ones")
				vals := body[4+n:]
				first := uint64(k%2) * SampleRows
				for _, j := range []uint64{0, 1, 7, 8, SampleRows - 1} {
					want := SampleValue(first + j)
					if !c.dict {
						assert.Equal(t, want, int64(binary.LittleEndian.Uint64(vals[8*j:])), "page %d value %d", k, j)
						continue
					}
					require.Equal(t, byte(SampleIndexBits), vals[0])
					h, m := binary.Uvarint(vals[1:])
					require.Equal(t, uint64(SampleRows/8<<1|1), h, "one bit-packed run")
					packed := vals[1+m:]
					bit := j * SampleIndexBits
					var w uint32 // (the index's bytes: three at most)
					for i := bit / 8; i < min(bit/8+3, uint64(len(packed))); i++ {
						w |= uint32(packed[i]) << (8 * (i - bit/8))
					}
					idx := w >> (bit % 8) & (1<<SampleIndexBits - 1)
					assert.Equal(t, uint32(uint64(want)&(1<<SampleIndexBits-1)), idx, "page %d index %d", k, j)
				}
			}
		})
	}
	_, err := Sample(false, false, 2, 3)
	assert.Error(t, err, "more distinct pages than pages")
}

// TestSpread: after Spread's moves, each page's table record reads its own
// copy of its stored bytes, from a 16-byte boundary.
func TestSpread(t *testing.T) {
	p, err := Sample(true, false, 6, 2)
	require.NoError(t, err)
	l, err := Plan(p)
	require.NoError(t, err)
	old := make([]byte, l.DataBytes)
	l.Fill(p, old, make([]byte, l.DictBytes))
	moves, n := l.Spread(p)
	require.Len(t, moves, 6)
	buf := make([]byte, n)
	for _, m := range moves {
		copy(buf[m.To:m.To+m.Len], old[m.From:m.From+m.Len])
	}
	seen := map[uint64]bool{}
	for k, pg := range p.Pages {
		src := binary.LittleEndian.Uint64(l.Table[k*PageBytes:])
		assert.Zero(t, src%16)
		assert.False(t, seen[src], "page %d has bytes of its own", k)
		seen[src] = true
		got := buf[Pad+src : Pad+src+uint64(pg.Stored)]
		assert.Equal(t, p.Data[pg.Offset:pg.Offset+int64(pg.Stored)], got, "page %d", k)
	}
	last := moves[5]
	assert.GreaterOrEqual(t, n, last.To+last.Len+Pad, "the padding after the last page")
}
