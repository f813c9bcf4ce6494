//go:build cuda

package cuda

import (
	"context"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// ringRoundTrip copies src to the device through r and back, and returns
// what came back (or the copy's error).
func ringRoundTrip(ctx context.Context, r *ring, src []byte) ([]byte, error) {
	b := testBackend
	back := make([]byte, len(src))
	err := b.d.do(func() error {
		dst, err := b.d.pool.alloc(int64(len(src)) + 64)
		if err != nil {
			return err
		}
		defer b.d.pool.release(&dst)
		if err := r.copy(ctx, b.d, b.up, transfer{dst.ptr, src}); err != nil {
			return b.settle(err)
		}
		if len(src) > 0 {
			if err := b.d.copyDtoH(unsafe.Pointer(&back[0]), dst.ptr, int64(len(src)), b.up); err != nil {
				return err
			}
		}
		return b.d.syncStream(b.up)
	})
	return back, err
}

// TestStagingRing: bytes arrive intact for lengths that are not multiples of
// the piece, over more pieces than slots, and the slots' order carries over
// from one copy to the next.
func TestStagingRing(t *testing.T) {
	var r *ring
	require.NoError(t, testBackend.d.do(func() (err error) { r, err = testBackend.newRing(64<<10, 4, 3); return err }))
	defer func() { require.NoError(t, testBackend.d.do(r.free)) }()
	rng := rand.New(rand.NewPCG(8, 8))
	for _, n := range []int{0, 1, 4095, 64 << 10, 64<<10 + 1, 1<<20 + 3, 5<<20 + 7} {
		src := make([]byte, n)
		fillRandom(rng, src)
		back, err := ringRoundTrip(t.Context(), r, src)
		require.NoError(t, err, "%d bytes", n)
		require.Equal(t, src, back, "%d bytes", n)
		require.Zero(t, r.active.Load())
	}
}

// TestStagingTransfers: several transfers in one call (a chunk's values and
// its bitmap) each arrive intact, the small one cut into smaller pieces.
func TestStagingTransfers(t *testing.T) {
	b := testBackend
	var r *ring
	require.NoError(t, b.d.do(func() (err error) { r, err = b.newRing(256<<10, 6, 4); return err }))
	defer func() { require.NoError(t, b.d.do(r.free)) }()
	r.minPiece = 4096
	rng := rand.New(rand.NewPCG(10, 10))
	srcs := [][]byte{make([]byte, 3<<20+5), make([]byte, 100003), make([]byte, 1)}
	for _, s := range srcs {
		fillRandom(rng, s)
	}
	backs := make([][]byte, len(srcs))
	pieces := 0
	err := b.d.do(func() error {
		var ts []transfer
		for _, s := range srcs {
			buf, err := b.d.pool.alloc(int64(len(s)))
			if err != nil {
				return err
			}
			defer b.d.pool.release(&buf)
			ts = append(ts, transfer{buf.ptr, s})
		}
		if err := r.copy(t.Context(), b.d, b.up, ts...); err != nil {
			return b.settle(err)
		}
		pieces = len(r.pieces)
		for i, tr := range ts {
			backs[i] = make([]byte, len(tr.src))
			if err := b.d.copyDtoH(unsafe.Pointer(&backs[i][0]), tr.dst, int64(len(tr.src)), b.up); err != nil {
				return err
			}
		}
		return b.d.syncStream(b.up)
	})
	require.NoError(t, err)
	require.Equal(t, 13+4+1, pieces, "3 MiB + 5 bytes in 256 KiB pieces, 100003 bytes in 28 KiB ones (a quarter, in 4 KiB steps), 1 byte")
	for i := range srcs {
		require.Equal(t, srcs[i], backs[i], "transfer %d", i)
	}
}

// cancelAfter is a context whose Err is nil for its first calls and then
// context.Canceled: a cancellation that lands while a copy is under way.
type cancelAfter struct {
	context.Context
	calls, after int
}

func (c *cancelAfter) Err() error {
	c.calls++
	if c.calls > c.after {
		return context.Canceled
	}
	return nil
}

// TestStagingCancel: a copy cancelled with pieces in flight returns
// context.Canceled with no fill still running, and the ring copies right
// afterwards.
func TestStagingCancel(t *testing.T) {
	var r *ring
	require.NoError(t, testBackend.d.do(func() (err error) { r, err = testBackend.newRing(64<<10, 8, 4); return err }))
	defer func() { require.NoError(t, testBackend.d.do(r.free)) }()
	src := make([]byte, 16<<20) // 256 pieces: the context is asked at 0, 64, 128, 192
	fillRandom(rand.New(rand.NewPCG(9, 9)), src)
	for _, after := range []int{0, 1, 3} {
		_, err := ringRoundTrip(&cancelAfter{Context: t.Context(), after: after}, r, src)
		require.ErrorIs(t, err, context.Canceled, "cancelled after %d checks", after)
		require.Zero(t, r.active.Load(), "no fill runs after the copy returned")
	}
	back, err := ringRoundTrip(t.Context(), r, src)
	require.NoError(t, err)
	require.Equal(t, src, back)
}
