//go:build cuda

package cuda

import (
	"context"

	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/column"
)

var _ backend.ResidentGPU = (*Backend)(nil)

// UploadView implements backend.ResidentGPU: Upload, for an engine's
// Residency.
func (b *Backend) UploadView(ctx context.Context, v *column.View) (backend.DeviceColumn, error) {
	c, err := b.Upload(ctx, v)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// DeviceBytes implements backend.ResidentGPU: the device memory Upload takes
// for v, its values and validity bitmap from their aligned starts, each in a
// block of the memory pool's size classes.
func (b *Backend) DeviceBytes(v *column.View) int64 {
	if v.Len == 0 || !b.Handles(v) {
		return 0
	}
	vs := valueSpan(v, specs[v.Kind], 0, v.Len)
	n := sizeClass(int64(vs.hi-vs.lo) + 64)
	if v.Validity != nil {
		bs := bitSpan(v.ValidityOffset, 0, v.Len)
		n += sizeClass(int64(bs.hi-bs.lo) + 64)
	}
	return n
}
