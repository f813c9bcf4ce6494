package dataset

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A chunkStream reads exactly the chunk's bytes, whatever the mix of Peek,
// Discard and Read, across its buffer's boundaries and past its size.
func TestChunkStream(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	file := make([]byte, 1<<20)
	for i := range file {
		file[i] = byte(r.Uint32())
	}
	var s chunkStream
	for trial := 0; trial < 50; trial++ {
		off := r.Int64N(1 << 19)
		n := r.Int64N(int64(len(file)) - off)
		want := file[off : off+n]
		s.reset(bytes.NewReader(file), off, n) // reused, as by a worker
		pos := 0
		for pos < len(want) {
			k := r.IntN(3 * streamBuffer)
			if r.IntN(4) == 0 {
				k = r.IntN(64)
			}
			switch r.IntN(3) {
			case 0:
				got, err := s.Peek(k)
				if pos+k > len(want) {
					assert.ErrorIs(t, err, io.EOF)
					k = len(want) - pos
				} else {
					require.NoError(t, err)
				}
				require.Equal(t, want[pos:pos+k], got)
			case 1:
				d, err := s.Discard(k)
				if pos+k > len(want) {
					assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
					k = len(want) - pos
				} else {
					require.NoError(t, err)
				}
				require.Equal(t, k, d)
				pos += k
			default:
				buf := make([]byte, k)
				got, err := io.ReadFull(&s, buf)
				if pos+k > len(want) {
					assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
					k = len(want) - pos
				} else {
					require.NoError(t, err)
				}
				require.Equal(t, k, got)
				require.Equal(t, want[pos:pos+k], buf[:k])
				pos += k
			}
		}
		b, err := s.Peek(1)
		assert.Empty(t, b)
		assert.ErrorIs(t, err, io.EOF)
		got, err := s.Read(make([]byte, 1))
		assert.Zero(t, got)
		assert.ErrorIs(t, err, io.EOF)
	}
}

// A file shorter than its chunk is an error, not a short chunk.
func TestChunkStreamShortFile(t *testing.T) {
	var s chunkStream
	s.reset(bytes.NewReader(make([]byte, 100)), 50, 80)
	_, err := s.Peek(200)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	s.reset(bytes.NewReader(make([]byte, 100)), 50, 80)
	_, err = io.ReadFull(&s, make([]byte, 80))
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	_, err = s.Peek(-1)
	assert.Error(t, err)
	_, err = s.Discard(-1)
	assert.Error(t, err)
}

// The page buffers come back without allocating, the larger ones kept.
func TestPageBuffers(t *testing.T) {
	var a pageBuffers
	b := a.Allocate(1000)
	assert.Len(t, b, 1000)
	b[0] = 7
	a.Free(b)
	c := a.Allocate(900)
	assert.Equal(t, &b[0], &c[0], "reused")
	assert.Len(t, c, 900)
	d := a.Reallocate(2000, c)
	assert.Len(t, d, 2000)
	assert.Equal(t, byte(7), d[0], "contents kept")
	a.Free(d)
	a.Free(make([]byte, 10))
	a.Free(make([]byte, 3000))
	a.Free(make([]byte, 5)) // smaller than both kept: dropped
	require.Len(t, a.free, maxFreeBuffers)
	assert.Equal(t, 3000, cap(a.Allocate(2500)))
	assert.Equal(t, 2000, cap(a.Allocate(1)))
	assert.Equal(t, 4096, cap(a.Allocate(4096)), "none left: a new one")
	assert.Equal(t, 10, cap(a.Reallocate(10, make([]byte, 5, 10))))
}
