package cpu

import (
	"encoding/binary"

	"github.com/arrowagg/arrowagg/column"
)

// The narrow kinds are folded as the kinds of their family that have loops:
// a morsel of float16 values as float64 (exact: every half is a double),
// decimal32 and decimal64 as decimal128 (sign-extended), fixed_size_binary as
// large_binary (offsets over the same bytes). The morsel is widened into a
// scratch buffer of its worker, then folded by the very loops of the wide
// kind, so its state is the one a column of the wide kind holding the same
// values gives: float16 min and max skip NaN and order -0 before +0, its sum
// is the compensated float64 sum, as for float32 and float64.

// wideKind is the kind whose loops fold values of kind k, and whether k is
// narrow (folded as another kind).
func wideKind(k column.Kind) (column.Kind, bool) {
	switch k {
	case column.Float16:
		return column.Float64, true
	case column.Decimal32, column.Decimal64:
		return column.Decimal128, true
	case column.FixedSizeBinary:
		return column.LargeBinary, true
	}
	return k, false
}

// narrow reports whether the values of v (a dictionary's values) are of a
// narrow kind.
func narrow(v *column.View) bool {
	if v.Dict != nil {
		v = v.Dict
	}
	_, ok := wideKind(v.Kind)
	return ok
}

// widenMorsel returns elements [lo, hi) of v, a view of a narrow kind that is
// not a dictionary, as a view of the wide kind whose element 0 is element lo
// (its rows too), its values in *buf (grown as needed).
func widenMorsel(v *column.View, lo, hi int, buf *[]byte) column.View {
	n := hi - lo
	w := *v
	w.Len, w.Row = n, v.Row+int64(lo)
	w.ValidityOffset = v.ValidityOffset + lo
	w.Offset = 0
	widenValues(&w, v, v.Offset+lo, n, buf)
	return w
}

// widenDict returns the dictionary d (a view of a narrow kind, all of it) as
// a view of the wide kind, its values in memory of its own.
func widenDict(d *column.View) *column.View {
	var buf []byte
	w := *d
	w.Offset = 0
	widenValues(&w, d, d.Offset, d.Len, &buf)
	return &w
}

// widenValues sets the kind and buffers of w to the n values of v from
// element first, widened into *buf.
func widenValues(w, v *column.View, first, n int, buf *[]byte) {
	kind, _ := wideKind(v.Kind)
	w.Kind = kind
	switch v.Kind {
	case column.Float16:
		out := column.Slice[float64](grow(buf, 8*n))
		in := column.Slice[uint16](v.Values)[first : first+n]
		for i, h := range in {
			out[i] = column.HalfToFloat64(h)
		}
		w.Values = (*buf)[:8*n]
	case column.Decimal32, column.Decimal64:
		out := column.Slice[uint64](grow(buf, 16*n))
		if v.Kind == column.Decimal32 {
			for i, x := range column.Slice[int32](v.Values)[first : first+n] {
				out[2*i], out[2*i+1] = uint64(int64(x)), uint64(int64(x)>>63)
			}
		} else {
			for i, x := range column.Slice[int64](v.Values)[first : first+n] {
				out[2*i], out[2*i+1] = uint64(x), uint64(x>>63)
			}
		}
		w.Values = (*buf)[:16*n]
	case column.FixedSizeBinary:
		width := int64(v.ElemWidth())
		offs := grow(buf, 8*(n+1))
		for i := 0; i <= n; i++ {
			binary.LittleEndian.PutUint64(offs[8*i:], uint64(int64(i)*width))
		}
		w.Offsets = offs[:8*(n+1)]
		w.Values = v.Values[int64(first)*width : int64(first+n)*width]
	}
}

// grow returns (*buf)[:n], reallocating *buf when it is shorter.
func grow(buf *[]byte, n int) []byte {
	if cap(*buf) < n {
		*buf = make([]byte, n)
	}
	*buf = (*buf)[:n]
	return *buf
}
