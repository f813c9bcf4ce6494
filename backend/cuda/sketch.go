//go:build cuda

package cuda

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/internal/cudrv"
	"github.com/arrowagg/arrowagg/kernels"
)

// A column's approx_distinct sketch on the device (kernels/agg.cu's
// DeviceSketch, kernels.AggSketchBytes): the sketch kernels of every chunk
// of the column raise the same one (registers by max, distinct hashes by
// union: the order of the launches changes nothing), which is zeroed
// before the first and read back once after the last, as an agg.Sketch.
const (
	sketchRegsBytes  = kernels.AggSketchRegisters // one byte each
	sketchSlotsBytes = kernels.AggSketchSlots * 8
)

// newSketch returns a zeroed device sketch; device thread.
func (d *device) newSketch() (devBuf, error) {
	b, err := d.pool.alloc(kernels.AggSketchBytes)
	if err != nil {
		return devBuf{}, fmt.Errorf("allocating the device sketch: %w", err)
	}
	if err := cudrv.MemsetD8(b.ptr, 0, kernels.AggSketchBytes); err != nil {
		d.pool.release(&b)
		return devBuf{}, fmt.Errorf("zeroing the device sketch: %w", err)
	}
	return b, nil
}

// readSketch copies device sketch b back once the work queued on st is
// done, and decodes it; device thread.
func (d *device) readSketch(b devBuf, st cudrv.Stream) (*agg.Sketch, error) {
	// Pageable memory: the driver's copy into it is over when the call
	// returns (the wait below is for the errors of the work before).
	host := make([]byte, kernels.AggSketchBytes)
	if err := d.copyDtoH(unsafe.Pointer(&host[0]), b.ptr, kernels.AggSketchBytes, st); err != nil {
		return nil, fmt.Errorf("copying the sketch to the host: %w", err)
	}
	if err := d.syncStream(st); err != nil {
		return nil, fmt.Errorf("copying the sketch to the host: %w", err)
	}
	return decodeSketch(host)
}

// decodeSketch turns the bytes of a DeviceSketch into an agg.Sketch. A
// register beyond the largest rank, or a count that is not the number of
// hashes kept, is an error (the device's memory is not what the kernels
// write).
func decodeSketch(b []byte) (*agg.Sketch, error) {
	if len(b) != kernels.AggSketchBytes {
		return nil, fmt.Errorf("device sketch of %d bytes, want %d", len(b), kernels.AggSketchBytes)
	}
	le := binary.LittleEndian
	k := new(agg.Sketch)
	for i := range k.Registers {
		r := b[i]
		if r > agg.SketchMaxRank {
			return nil, fmt.Errorf("device sketch: register %d holds rank %d, beyond %d", i, r, agg.SketchMaxRank)
		}
		k.Registers[i] = uint8(r)
	}
	tail := b[sketchRegsBytes+sketchSlotsBytes:]
	count, overflow, zero := le.Uint32(tail), le.Uint32(tail[4:]), le.Uint32(tail[8:])
	if overflow != 0 {
		k.SetExact(nil, true)
		return k, nil
	}
	var hashes []uint64
	for i := 0; i < kernels.AggSketchSlots; i++ {
		if h := le.Uint64(b[sketchRegsBytes+8*i:]); h != 0 {
			hashes = append(hashes, h)
		}
	}
	if zero != 0 {
		hashes = append(hashes, 0)
	}
	if len(hashes) != int(count) || count > agg.SketchExact {
		return nil, fmt.Errorf("device sketch: %d distinct hashes kept, counted %d", len(hashes), count)
	}
	k.SetExact(hashes, false)
	return k, nil
}
