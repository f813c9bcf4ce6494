//go:build cuda

package cuda

import (
	"fmt"
	"math/bits"

	"github.com/arrowagg/arrowagg/internal/cudrv"
)

// devBuf is a block of device memory from the pool.
type devBuf struct {
	ptr  cudrv.DevicePtr
	size int64 // the block's size class, >= the size asked for
}

// pool is a caching allocator of device memory: blocks are kept by size
// class and reused, so that steady-state aggregation calls no cuMemAlloc.
// It is used on the device thread only.
type pool struct {
	free   map[int64][]cudrv.DevicePtr
	inUse  int64 // bytes of blocks handed out
	cached int64 // bytes of blocks in the free lists
	limit  int64 // 0, or the most bytes the pool may hold (WithMemoryLimit)
	// faults makes this device's driver calls fail, in tests (faults.go);
	// nil otherwise.
	faults *faults
}

func newPool() *pool { return &pool{free: map[int64][]cudrv.DevicePtr{}} }

// minBlock is the smallest block: it keeps block addresses aligned well
// beyond what the kernels need (16 bytes).
const minBlock = 4 << 10

// sizeClass rounds n up to a size class (at most 25% more), at least
// minBlock.
func sizeClass(n int64) int64 {
	if n <= minBlock {
		return minBlock
	}
	// Four classes between consecutive powers of two: steps of an eighth of
	// the next power of two (n > minBlock, so the shift is positive).
	step := int64(1) << (bits.Len64(uint64(n-1)) - 3)
	return (n + step - 1) / step * step
}

// alloc returns a block of at least n bytes. When the driver is out of
// memory it frees the cached blocks and tries once more.
func (p *pool) alloc(n int64) (devBuf, error) {
	c := sizeClass(n)
	if l := p.free[c]; len(l) > 0 {
		ptr := l[len(l)-1]
		p.free[c] = l[:len(l)-1]
		p.cached -= c
		p.inUse += c
		return devBuf{ptr, c}, nil
	}
	ptr, err := p.driverAlloc(c)
	if err != nil && isOOM(err) && p.cached > 0 {
		if terr := p.trim(); terr != nil {
			return devBuf{}, terr
		}
		ptr, err = p.driverAlloc(c)
	}
	if err != nil {
		return devBuf{}, fmt.Errorf("allocating %d bytes of device memory (%d in use): %w", c, p.inUse, err)
	}
	p.inUse += c
	return devBuf{ptr, c}, nil
}

func (p *pool) driverAlloc(c int64) (cudrv.DevicePtr, error) {
	if p.faults != nil {
		if err := p.faults.hit(faultDeviceAlloc); err != nil {
			return 0, err
		}
	}
	if p.limit > 0 && p.inUse+p.cached+c > p.limit {
		return 0, cudrv.OutOfMemory
	}
	return cudrv.MemAlloc(c)
}

// release returns a block to the pool (nil blocks are ignored).
func (p *pool) release(b *devBuf) {
	if b.ptr == 0 {
		return
	}
	p.free[b.size] = append(p.free[b.size], b.ptr)
	p.inUse -= b.size
	p.cached += b.size
	*b = devBuf{}
}

// trim frees the cached blocks.
func (p *pool) trim() error {
	var first error
	for c, l := range p.free {
		for _, ptr := range l {
			if err := cudrv.MemFree(ptr); err != nil && first == nil {
				first = fmt.Errorf("freeing %d bytes of device memory: %w", c, err)
			}
			p.cached -= c
		}
		delete(p.free, c)
	}
	return first
}
