package cpu

import (
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/arrowagg/arrowagg/column"
)

// indexType is the type family of dictionary indices.
type indexType interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64
}

// gatherable reports whether the dictionary values that a morsel's indices
// point at can be gathered into a dense column and folded by the values'
// own loops and kernels: numbers of a fixed width, none of them null (a
// Parquet dictionary never holds nulls).
func gatherable(v *column.View) bool {
	d := v.Dict
	if d.Validity != nil && d.NullCount != 0 {
		return false
	}
	switch d.Kind {
	case column.Int8, column.Int16, column.Int32, column.Int64,
		column.Uint8, column.Uint16, column.Uint32, column.Uint64,
		column.Float32, column.Float64:
		return true
	}
	return false
}

// gatherDict gathers the dictionary values of the valid indices [lo, hi) of
// v, in index order, into the morsel's scratch, and returns them as a dense
// view without nulls (the valid indices' count is its Len). An index out
// of the dictionary is an error, as dictAcc reports it.
func (m *morselAccs) gatherDict(v *column.View, lo, hi int) (column.View, error) {
	w := v.Dict.Kind.Width()
	if need := (hi - lo) * w; cap(m.gathered)*8 < need {
		m.gathered = make([]uint64, (need+7)/8)
	}
	out := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(m.gathered))), cap(m.gathered)*8)
	var n int
	var err error
	switch v.IndexKind {
	case column.Int8:
		n, err = gatherWidth[int8](v, lo, hi, w, out)
	case column.Int16:
		n, err = gatherWidth[int16](v, lo, hi, w, out)
	case column.Int32:
		n, err = gatherWidth[int32](v, lo, hi, w, out)
	case column.Int64:
		n, err = gatherWidth[int64](v, lo, hi, w, out)
	case column.Uint8:
		n, err = gatherWidth[uint8](v, lo, hi, w, out)
	case column.Uint16:
		n, err = gatherWidth[uint16](v, lo, hi, w, out)
	case column.Uint32:
		n, err = gatherWidth[uint32](v, lo, hi, w, out)
	case column.Uint64:
		n, err = gatherWidth[uint64](v, lo, hi, w, out)
	default:
		err = fmt.Errorf("dictionary index kind %s is not an integer", v.IndexKind)
	}
	if err != nil {
		return column.View{}, err
	}
	return column.View{Type: v.Dict.Type, Kind: v.Dict.Kind, Len: n, Values: out[:n*w]}, nil
}

// gatherWidth is gatherDict for indices of type I and values of w bytes:
// the values are moved as their bits.
func gatherWidth[I indexType](v *column.View, lo, hi, w int, out []byte) (int, error) {
	idx := column.Values[I](v)
	d := v.Dict
	switch w {
	case 1:
		return gather(idx, v.Validity, v.ValidityOffset, lo, hi, column.Slice[uint8](d.Values)[d.Offset:d.Offset+d.Len], column.Slice[uint8](out))
	case 2:
		return gather(idx, v.Validity, v.ValidityOffset, lo, hi, column.Slice[uint16](d.Values)[d.Offset:d.Offset+d.Len], column.Slice[uint16](out))
	case 4:
		return gather(idx, v.Validity, v.ValidityOffset, lo, hi, column.Slice[uint32](d.Values)[d.Offset:d.Offset+d.Len], column.Slice[uint32](out))
	default:
		return gather(idx, v.Validity, v.ValidityOffset, lo, hi, column.Slice[uint64](d.Values)[d.Offset:d.Offset+d.Len], column.Slice[uint64](out))
	}
}

// gather writes dict[idx[i]] for the valid i in [lo, hi) to out, in order,
// and returns how many it wrote.
func gather[I indexType, T uint8 | uint16 | uint32 | uint64](idx []I, validity []byte, bitOff, lo, hi int, dict, out []T) (int, error) {
	n := 0
	size := uint64(len(dict))
	bad := func(i int) error {
		return fmt.Errorf("dictionary index %d not in [0, %d) at element %d", int64(idx[i]), size, i)
	}
	if validity == nil {
		out = out[:hi-lo]
		for i := lo; i < hi; i++ {
			j := uint64(idx[i])
			if j >= size {
				return 0, bad(i)
			}
			out[i-lo] = dict[j]
		}
		return hi - lo, nil
	}
	for i := lo; i < hi; i += 64 {
		m := min(64, hi-i)
		w := loadBits(validity, bitOff+i, m)
		if m < 64 {
			w &= 1<<uint(m) - 1
		}
		if w == ^uint64(0) {
			o := out[n : n+64]
			for k := range o {
				j := uint64(idx[i+k])
				if j >= size {
					return 0, bad(i + k)
				}
				o[k] = dict[j]
			}
			n += 64
			continue
		}
		for ; w != 0; w &= w - 1 {
			k := i + bits.TrailingZeros64(w)
			j := uint64(idx[k])
			if j >= size {
				return 0, bad(k)
			}
			out[n] = dict[j]
			n++
		}
	}
	return n, nil
}
