//go:build cuda

package cuda

import (
	"context"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/internal/cudrv"
	"github.com/arrowagg/arrowagg/internal/staging"
)

// The scheduling of the staging ring, cancellation and failures included,
// is tested without a GPU in internal/staging; this test runs it on the
// device: its copies on a stream, a slot's mark an event.

// ringRoundTrip copies srcs to the device through r (page-locked ones
// directly) and back, and returns what came back (or the copy's error).
func ringRoundTrip(ctx context.Context, r *ring, srcs ...[]byte) ([][]byte, error) {
	b := testBackend
	backs := make([][]byte, len(srcs))
	err := b.d.do(func() error {
		var ts []staging.Transfer
		for _, src := range srcs {
			dst, err := b.d.pool.alloc(int64(len(src)) + 64)
			if err != nil {
				return err
			}
			defer b.d.pool.release(&dst)
			ts = append(ts, toDevice(dst.ptr, src))
		}
		if err := r.copy(ctx, b.d, b.up, ts...); err != nil {
			return b.settle(err)
		}
		for i, t := range ts {
			backs[i] = make([]byte, len(t.Src))
			if len(t.Src) > 0 {
				if err := b.d.copyDtoH(unsafe.Pointer(&backs[i][0]), cudrv.DevicePtr(t.Dst), int64(len(t.Src)), b.up); err != nil {
					return err
				}
			}
		}
		return b.d.syncStream(b.up)
	})
	return backs, err
}

// TestStagingRing: bytes arrive intact for lengths that are not multiples of
// the piece, over more pieces than slots, and the slots' order carries over
// from one copy to the next; with a page-locked source among them, copied
// directly.
func TestStagingRing(t *testing.T) {
	var r *ring
	require.NoError(t, testBackend.d.do(func() (err error) { r, err = testBackend.newRing(64<<10, 4, 3); return err }))
	defer func() { require.NoError(t, testBackend.d.do(r.free)) }()
	var pin []byte
	require.NoError(t, testBackend.d.do(func() (err error) { pin, err = hostAlloc(300001); return err }))
	defer func() { require.NoError(t, testBackend.d.do(func() error { return hostFree(pin) })) }()
	rng := rand.New(rand.NewPCG(8, 8))
	fillRandom(rng, pin)
	for _, n := range []int{0, 1, 4095, 64 << 10, 64<<10 + 1, 1<<20 + 3, 5<<20 + 7} {
		src := make([]byte, n)
		fillRandom(rng, src)
		backs, err := ringRoundTrip(t.Context(), r, src, pin, src[:n/3])
		require.NoError(t, err, "%d bytes", n)
		require.Equal(t, src, backs[0], "%d bytes", n)
		require.Equal(t, pin, backs[1], "page-locked, with %d bytes", n)
		require.Equal(t, src[:n/3], backs[2], "%d bytes", n/3)
		require.Zero(t, r.Active())
	}
}
