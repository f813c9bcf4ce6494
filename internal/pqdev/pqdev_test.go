package pqdev

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
)

// threeChunks is pages of three chunks: the first and the last with a
// dictionary.
func threeChunks() *column.Pages {
	p := &column.Pages{Type: column.TypeName("int64"), Kind: column.Int64, Data: make([]byte, 300),
		Chunks: []column.Span{{Off: 0, Len: 100}, {Off: 100, Len: 100}, {Off: 200, Len: 100}},
		Dicts:  [][]byte{make([]byte, 16), nil, make([]byte, 24)}}
	for c := 0; c < 3; c++ {
		for k := 0; k < 2; k++ {
			p.Pages = append(p.Pages, column.Page{Chunk: c, Offset: int64(100*c + 50*k), Stored: 40, Body: 40, Rows: 5,
				Dictionary: c != 1, RowGroup: c, Index: k})
			p.Rows += 5
		}
	}
	return p
}

func TestPlanLayout(t *testing.T) {
	p := threeChunks()
	p.Pages[1].Snappy, p.Pages[1].Body = true, 80
	l, err := Plan(p)
	require.NoError(t, err)
	assert.Equal(t, []int64{Pad, Pad + 112, Pad + 224}, l.ChunkAt, "chunks from 16-byte boundaries after the padding")
	assert.Equal(t, int64(Pad+336+Pad), l.DataBytes)
	assert.Equal(t, []int64{0, 16, 16}, l.DictAt)
	assert.Equal(t, int64(40), l.DictBytes)
	assert.Equal(t, 1, l.Snappy)
	assert.Equal(t, int64(Pad+96+Pad), l.ScratchBytes, "one slot of 80 bytes and its padding, aligned")
	rec := func(i int) []byte { return l.Table[i*PageBytes : (i+1)*PageBytes] }
	le := binary.LittleEndian
	assert.Equal(t, uint64(Pad+224-Pad+50), le.Uint64(rec(5)[0:]), "src: the page's offset in the chunk buffer")
	assert.Equal(t, uint64(2), le.Uint64(rec(4)[16:]), "dict: the third chunk's dictionary, in values")
	assert.Equal(t, uint32(3), le.Uint32(rec(4)[36:]), "ndict")
	assert.Equal(t, uint32(0), le.Uint32(rec(2)[36:]), "a PLAIN page has no dictionary")
	assert.Equal(t, uint32(2|4), le.Uint32(rec(1)[48:]), "flags: snappy, dictionary")
}

func TestCheckRefuses(t *testing.T) {
	for name, bad := range map[string]func(p *column.Pages){
		"page past its chunk":      func(p *column.Pages) { p.Pages[0].Offset = 70 },
		"chunk past the data":      func(p *column.Pages) { p.Chunks[2].Len = 101 },
		"overlapping chunks":       func(p *column.Pages) { p.Chunks[1].Off = 99 },
		"levels past the page":     func(p *column.Pages) { p.Pages[0].V2, p.Pages[0].Levels = true, 41 },
		"uncompressed body size":   func(p *column.Pages) { p.Pages[0].Body = 39 },
		"rows":                     func(p *column.Pages) { p.Rows++ },
		"pages out of chunk order": func(p *column.Pages) { p.Pages[0].Chunk, p.Pages[0].Offset = 1, 100 },
		"dictionary of odd size":   func(p *column.Pages) { p.Dicts[0] = make([]byte, 12) },
		"a kind without a kernel":  func(p *column.Pages) { p.Kind = column.Int8 },
		"RLE integers":             func(p *column.Pages) { p.Pages[2].RLE = true },
		"a dictionary of booleans": func(p *column.Pages) { p.Kind = column.Bool },
		"booleans as indices": func(p *column.Pages) {
			p.Kind, p.Dicts = column.Bool, make([][]byte, 3)
		},
	} {
		p := threeChunks()
		bad(p)
		_, err := Plan(p)
		assert.Error(t, err, name)
	}
}

// TestPlanBools lays out pages of booleans: no dictionaries, the RLE flag
// where a page's values are RLE-encoded.
func TestPlanBools(t *testing.T) {
	p := threeChunks()
	p.Kind, p.Dicts = column.Bool, make([][]byte, 3)
	for i := range p.Pages {
		p.Pages[i].Dictionary, p.Pages[i].RLE = false, i == 3
	}
	l, err := Plan(p)
	require.NoError(t, err)
	assert.Equal(t, uint32(8), binary.LittleEndian.Uint32(l.Table[3*PageBytes+48:]), "flags: RLE")
	assert.Equal(t, uint32(0), binary.LittleEndian.Uint32(l.Table[2*PageBytes+48:]), "flags: PLAIN")
	assert.Equal(t, "arrowagg_pq_bool", Kernel(column.Bool))
	assert.Equal(t, 2, Words(column.Bool))
	assert.Equal(t, "arrowagg_pq_int64", Kernel(column.Decimal64), "decimals stored as int64: their integers")
}

func TestBatches(t *testing.T) {
	p := threeChunks()
	bs := Batches(p, 200)
	require.Len(t, bs, 2)
	assert.Len(t, bs[0].Chunks, 2)
	assert.Len(t, bs[0].Pages, 4)
	assert.Equal(t, int64(20), bs[0].Rows)
	assert.Equal(t, [][]byte{p.Dicts[2]}, bs[1].Dicts)
	assert.Equal(t, 0, bs[1].Pages[0].Chunk, "chunk indices of the batch")
	for _, q := range bs {
		_, err := Plan(q)
		assert.NoError(t, err)
	}
	assert.Len(t, Batches(p, 1), 3, "a chunk larger than the limit is a batch of its own")
}

func TestAggregateStatus(t *testing.T) {
	p := threeChunks()
	s := agg.New(column.FamilySigned, agg.Default)
	err := Aggregate(context.Background(), p, &s, 1<<20, func(q *column.Pages, l *Layout, words []uint64, status []uint32) error {
		status[3] = 6
		return nil
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "row group 1: page 1: corrupt: a dictionary index outside the dictionary")
	assert.Equal(t, int64(0), s.Count+s.NullCount, "the state is untouched")
}

// TestAggregateFitting makes the batches smaller while a run is short of
// memory: the fake device takes at most limit bytes of buffers, and each
// batch's state counts its rows (a sum of one a row).
func TestAggregateFitting(t *testing.T) {
	errShort := errors.New("short of memory")
	short := func(err error) bool { return errors.Is(err, errShort) }
	p := threeChunks() // (300 stored bytes: batches of 150 are a chunk each)
	var chunk int64    // the most buffer bytes of a chunk alone
	for _, q := range Batches(p, 1) {
		l, err := Plan(q)
		require.NoError(t, err)
		chunk = max(chunk, l.Bytes())
	}
	for _, c := range []struct {
		name  string
		limit int64
		tries int // runs
		fails bool
	}{
		{"room for all", 1 << 20, 1, false},
		{"room for a chunk", chunk, 4, false}, // all three, then each alone
		{"room for none", chunk / 4, 2, true}, // all three, then the first alone
	} {
		t.Run(c.name, func(t *testing.T) {
			s := agg.New(column.FamilySigned, agg.Default)
			tries := 0
			err := AggregateFitting(context.Background(), p, &s, 1<<20, func(q *column.Pages, l *Layout, words []uint64, status []uint32) error {
				tries++
				if l.Bytes() > c.limit {
					return fmt.Errorf("%d bytes: %w", l.Bytes(), errShort)
				}
				words[0], words[2], words[3], words[4] = uint64(q.Rows), 1, 1, uint64(q.Rows)
				return nil
			}, short)
			assert.Equal(t, c.tries, tries)
			if c.fails {
				require.ErrorIs(t, err, errShort)
				assert.Equal(t, int64(0), s.Count+s.NullCount, "the state is untouched")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, p.Rows, s.Count)
			assert.Equal(t, uint64(p.Rows), s.Sum[0], "each row counted once, in the try that succeeded")
		})
	}
	s := agg.New(column.FamilySigned, agg.Default)
	tries := 0
	other := errors.New("a launch failed")
	err := AggregateFitting(context.Background(), p, &s, 1<<20, func(*column.Pages, *Layout, []uint64, []uint32) error {
		tries++
		return other
	}, short)
	require.ErrorIs(t, err, other)
	assert.Equal(t, 1, tries, "other errors are not retried")
}
