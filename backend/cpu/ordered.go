package cpu

import (
	"bytes"
	"fmt"
	"math"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
)

// The ordered aggregates on the CPU: once a morsel's extremes are known, the
// first and last valid elements and the first occurrences of its minimum and
// maximum are searches that stop at the first hit, so the fused pass itself
// stays as it is and pays nothing when they are not asked for.

// element is one value of a view in the agg.State encoding.
type element struct {
	enc   [2]uint64
	bytes []byte
}

// elementAt reads element i of v; ok is false when it is null (for
// dictionaries: a null index or a null dictionary value).
func elementAt(v *column.View, i int) (e element, ok bool, err error) {
	if !v.Valid(i) {
		return e, false, nil
	}
	if v.Dict != nil {
		j, err := dictIndex(v, i)
		if err != nil {
			return e, false, err
		}
		return elementAt(v.Dict, j)
	}
	k := v.Offset + i
	switch v.Kind {
	case column.Int8:
		e.enc[0] = uint64(int64(column.Slice[int8](v.Values)[k]))
	case column.Int16:
		e.enc[0] = uint64(int64(column.Slice[int16](v.Values)[k]))
	case column.Int32:
		e.enc[0] = uint64(int64(column.Slice[int32](v.Values)[k]))
	case column.Int64:
		e.enc[0] = uint64(column.Slice[int64](v.Values)[k])
	case column.Uint8:
		e.enc[0] = uint64(column.Slice[uint8](v.Values)[k])
	case column.Uint16:
		e.enc[0] = uint64(column.Slice[uint16](v.Values)[k])
	case column.Uint32:
		e.enc[0] = uint64(column.Slice[uint32](v.Values)[k])
	case column.Uint64:
		e.enc[0] = column.Slice[uint64](v.Values)[k]
	case column.Float32:
		e.enc[0] = math.Float64bits(float64(column.Slice[float32](v.Values)[k]))
	case column.Float64:
		e.enc[0] = math.Float64bits(column.Slice[float64](v.Values)[k])
	case column.Bool:
		if column.BitIsSet(v.Values, k) {
			e.enc[0] = 1
		}
	case column.Float16:
		e.enc[0] = math.Float64bits(column.HalfToFloat64(column.Slice[uint16](v.Values)[k]))
	case column.Decimal128:
		w := column.Slice[uint64](v.Values)
		e.enc = [2]uint64{w[2*k], w[2*k+1]}
	case column.Decimal32, column.Decimal64:
		x := int64(column.Slice[int32](v.Values)[k])
		if v.Kind == column.Decimal64 {
			x = column.Slice[int64](v.Values)[k]
		}
		e.enc = [2]uint64{uint64(x), uint64(x >> 63)}
	case column.FixedSizeBinary:
		w := v.ElemWidth()
		e.bytes = v.Values[k*w : (k+1)*w]
	case column.Binary, column.LargeBinary:
		acc := bytesAcc{v: v}
		e.bytes = acc.value(i)
		if acc.err != nil {
			return e, false, acc.err
		}
	default:
		return e, false, fmt.Errorf("no ordered aggregates for %s", v.Type)
	}
	return e, true, nil
}

// dictIndex is the dictionary index of element i of a dictionary view.
func dictIndex(v *column.View, i int) (int, error) {
	k := v.Offset + i
	var j int64
	switch v.IndexKind {
	case column.Int8:
		j = int64(column.Slice[int8](v.Values)[k])
	case column.Int16:
		j = int64(column.Slice[int16](v.Values)[k])
	case column.Int32:
		j = int64(column.Slice[int32](v.Values)[k])
	case column.Int64:
		j = column.Slice[int64](v.Values)[k]
	case column.Uint8:
		j = int64(column.Slice[uint8](v.Values)[k])
	case column.Uint16:
		j = int64(column.Slice[uint16](v.Values)[k])
	case column.Uint32:
		j = int64(column.Slice[uint32](v.Values)[k])
	case column.Uint64:
		j = int64(column.Slice[uint64](v.Values)[k])
	}
	if j < 0 || j >= int64(v.Dict.Len) {
		return 0, fmt.Errorf("dictionary index %d not in [0, %d) at element %d", j, v.Dict.Len, i)
	}
	return int(j), nil
}

// isExtreme reports whether e is the state's min (isMax false) or max.
func isExtreme(s *agg.State, e element, isMax bool) bool {
	switch s.Family {
	case column.FamilyBytes:
		if isMax {
			return bytes.Equal(e.bytes, s.BMax)
		}
		return bytes.Equal(e.bytes, s.BMin)
	case column.FamilyBool:
		return e.enc[0] == s.BoolExtreme(isMax)
	case column.FamilyFloat:
		x := s.FloatExtreme(isMax)
		f := math.Float64frombits(e.enc[0])
		if math.IsNaN(x) {
			return math.IsNaN(f)
		}
		return e.enc[0] == math.Float64bits(x)
	case column.FamilyDecimal:
		if isMax {
			return e.enc == s.Max
		}
		return e.enc == s.Min
	}
	if isMax {
		return e.enc[0] == s.Max[0]
	}
	return e.enc[0] == s.Min[0]
}

// orderedMorsel fills the ordered aggregates of the morsel state s, whose
// other aggregates of elements [lo, hi) of v are final.
func orderedMorsel(s *agg.State, v *column.View, lo, hi int) error {
	p := agg.NoPositions
	if s.Count > 0 {
		if err := positions(&p, s, v, lo, hi); err != nil {
			return err
		}
	}
	s.SetPositions(p)
	return nil
}

// positions finds the positions of elements [lo, hi) of v, whose extremes
// s has.
func positions(p *agg.Positions, s *agg.State, v *column.View, lo, hi int) error {
	// first, then the first min and max: one forward scan that stops once
	// all three are found.
	for i := lo; i < hi && (p.FirstRow < 0 || p.MinRow < 0 || p.MaxRow < 0); i++ {
		e, ok, err := elementAt(v, i)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		row := v.Row + int64(i)
		if p.FirstRow < 0 {
			p.FirstRow, p.First, p.BFirst = row, e.enc, e.bytes
		}
		if p.MinRow < 0 && isExtreme(s, e, false) {
			p.MinRow = row
		}
		if p.MaxRow < 0 && isExtreme(s, e, true) {
			p.MaxRow = row
		}
	}
	for i := hi - 1; i >= lo; i-- {
		e, ok, err := elementAt(v, i)
		if err != nil {
			return err
		}
		if ok {
			p.LastRow, p.Last, p.BLast = v.Row+int64(i), e.enc, e.bytes
			break
		}
	}
	return nil
}
