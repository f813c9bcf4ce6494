package kernels

import (
	"math"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
)

// State turns the state words of a launch over n elements of kind k (of
// agg.cu's per-kind, many-column or page kernels) into a partial state: the
// word layouts are documented in agg.cu.
func State(k column.Kind, n int64, w []uint64) agg.State {
	switch k.Family() {
	case column.FamilySigned:
		count := int64(w[4])
		return agg.Signed(count, n-count, agg.Int192From128(w[0], int64(w[1])), int64(w[2]), int64(w[3]))
	case column.FamilyUnsigned:
		count := int64(w[4])
		return agg.Unsigned(count, n-count, agg.Int192{w[0], w[1], 0}, w[2], w[3])
	case column.FamilyFloat:
		count := int64(w[5])
		return agg.Float(count, n-count, math.Float64frombits(w[0]), math.Float64frombits(w[1]),
			math.Float64frombits(w[2]), math.Float64frombits(Unkey(w[3])), math.Float64frombits(Unkey(w[4])))
	case column.FamilyDecimal:
		count := int64(w[7])
		return agg.Decimal(count, n-count, agg.Int192{w[0], w[1], w[2]}, [2]uint64{w[3], w[4]}, [2]uint64{w[5], w[6]})
	case column.FamilyBool:
		count := int64(w[1])
		return agg.Bool(count, n-count, int64(w[0]))
	}
	return agg.Nulls(k.Family(), n)
}

// Unkey turns a float order key of the kernels back into float64 bits.
func Unkey(k uint64) uint64 {
	return k ^ uint64(int64(k)>>63)&math.MaxInt64
}
