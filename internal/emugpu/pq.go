//go:build emu

package emugpu

// #include "pq.h"
import "C"

import (
	"context"
	"errors"
	"fmt"
	"unsafe"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/internal/pqdev"
)

var pqKinds = map[column.Kind]C.uint32_t{
	column.Int32: 0, column.Int64: 1, column.Uint32: 2, column.Uint64: 3, column.Float32: 4, column.Float64: 5,
	column.Decimal32: 0, column.Decimal64: 1, // (their integers: kernels.State)
	column.Bool: 6,
}

// RunPages is a pqdev.Run on the CPU: the page kernels over one batch, as
// the CUDA backend launches them.
func RunPages(q *column.Pages, l *pqdev.Layout, words []uint64, status []uint32) error {
	kind, ok := pqKinds[q.Kind]
	if !ok {
		return fmt.Errorf("no page kernel for %s", q.Kind)
	}
	data, dict := make([]byte, l.DataBytes), make([]byte, l.DictBytes+1)
	l.Fill(q, data, dict)
	var out [16]uint64
	maxdef := C.uint32_t(0)
	if q.Nullable {
		maxdef = 1
	}
	snappy := C.uint32_t(0)
	if l.Snappy > 0 {
		snappy = 1
	}
	rc := C.emugpu_pq(kind, (*C.uint8_t)(unsafe.Pointer(&data[0])), C.uint64_t(len(data)),
		(*C.uint8_t)(unsafe.Pointer(&l.Table[0])), C.uint32_t(len(q.Pages)),
		(*C.uint8_t)(unsafe.Pointer(&dict[0])), C.uint64_t(l.DictBytes), C.uint64_t(l.ScratchBytes), snappy, maxdef,
		(*C.uint64_t)(unsafe.Pointer(&out[0])), (*C.uint32_t)(unsafe.Pointer(&status[0])))
	if rc != 0 {
		return fmt.Errorf("emugpu_pq: %d", rc)
	}
	copy(words, out[:])
	return nil
}

// Backend is a GPU backend whose Parquet page path is the page kernels run
// on the CPU (backend.PageGPU), for tests of the GPU page route on machines
// without a GPU. It aggregates no views (Handles is false): the engine
// gives those to its CPU backend.
type Backend struct {
	// Batch is the stored bytes of a batch of chunks (pqdev.Aggregate);
	// 0: all at once.
	Batch int64
	// DeviceBytes, when not 0, is the emulated device's memory: a batch
	// whose buffers (pqdev.Layout.Bytes) exceed it fails as out of memory
	// (pqdev.AggregateFitting halves the batches then), as the CUDA
	// backend's allocations do.
	DeviceBytes int64
	cpu         cpu.CPU
}

// errOutOfMemory is the emulated device's allocation failure.
var errOutOfMemory = errors.New("emulated device: out of memory")

var (
	_ backend.GPUBackend = (*Backend)(nil)
	_ backend.PageGPU    = (*Backend)(nil)
)

func (b *Backend) Name() string                { return "gpu" }
func (b *Backend) Handles(v *column.View) bool { return false }
func (b *Backend) Close() error                { return nil }

// Update folds views on the CPU (the engine gives it none: Handles).
func (b *Backend) Update(ctx context.Context, views []*column.View, states []*agg.State) error {
	return b.cpu.Update(ctx, views, states)
}

// Warm does nothing: the emulation has no device to open.
func (b *Backend) Warm() error { return nil }

// HandlesPages is pqdev.Handles.
func (b *Backend) HandlesPages(k column.Kind, tracks agg.Set) bool { return pqdev.Handles(k, tracks) }

// UpdatePages folds p into s through the emulated page kernels.
func (b *Backend) UpdatePages(ctx context.Context, p *column.Pages, s *agg.State) error {
	batch := b.Batch
	if batch <= 0 {
		batch = 1 << 62
	}
	run := RunPages
	if b.DeviceBytes > 0 {
		run = func(q *column.Pages, l *pqdev.Layout, words []uint64, status []uint32) error {
			if l.Bytes() > b.DeviceBytes {
				return fmt.Errorf("%d bytes of buffers: %w", l.Bytes(), errOutOfMemory)
			}
			return RunPages(q, l, words, status)
		}
	}
	oom := func(err error) bool { return errors.Is(err, errOutOfMemory) }
	err := pqdev.AggregateFitting(ctx, p, s, batch, run, oom)
	if oom(err) {
		return fmt.Errorf("%s pages: %w: %w", p.Type, backend.ErrDeviceMemory, err)
	}
	return err
}
