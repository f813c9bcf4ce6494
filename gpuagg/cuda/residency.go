//go:build cuda

package cuda

import (
	"context"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/gpuagg"
)

var _ gpuagg.ResidentGPU = (*Backend)(nil)

// UploadView implements gpuagg.ResidentGPU: Upload, for a gpuagg.Residency.
func (b *Backend) UploadView(ctx context.Context, v *column.View) (gpuagg.DeviceColumn, error) {
	c, err := b.Upload(ctx, v)
	if err != nil {
		return nil, err
	}
	return deviceColumn{c}, nil
}

// DeviceBytes implements gpuagg.ResidentGPU: the device memory Upload takes
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

// deviceColumn is a resident Column as a gpuagg.DeviceColumn.
type deviceColumn struct{ *Column }

// Update implements gpuagg.DeviceColumn. Column.Update folds the column into
// a state of its own and merges that into s; at another row than the one
// uploaded, so does this, with the rows of that state moved: the result is
// the same as Column.Update's of a column uploaded with that row.
func (d deviceColumn) Update(ctx context.Context, s *gpuagg.State, row int64) error {
	if row == d.row || !s.Ordered() {
		return d.Column.Update(ctx, s)
	}
	part := agg.New(d.kind.Family(), agg.All)
	if err := d.Column.Update(ctx, &part); err != nil {
		return err
	}
	part.ShiftRows(row - d.row)
	s.Merge(&part)
	return nil
}
