package cpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
)

// TestZeroExtremes: a morsel whose least or greatest value is a zero takes
// the sign of its zeros (-0 below +0), as agg.FloatMin and FloatMax give it
// over the valid values, whatever the nulls' slots hold: float64 and
// float32, plain and dictionary-encoded (gathered, and folded index by index
// where the dictionary has nulls), at every SIMD level, at lengths around
// the kernels' widths, with -0, +0, both or neither among the values.
func TestZeroExtremes(t *testing.T) {
	negZero := math.Copysign(0, -1)
	r := rand.New(rand.NewPCG(3, 4))
	for _, typ := range []arrow.DataType{arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float32} {
		for _, n := range simdSizes {
			for c := range 16 {
				// c: the sign of the other values (bit 0), whether -0
				// (bit 1) and +0 (bit 2) are among the valid values,
				// whether there are nulls (bit 3), their slots holding
				// zeros of both signs.
				sign := []float64{1, -1}[c&1]
				vals := make([]float64, n)
				valid := make([]bool, n)
				for i := range vals {
					vals[i] = sign * (1 + r.Float64()*1e3)
					valid[i] = c&8 == 0 || r.IntN(4) != 0
					if !valid[i] {
						vals[i] = []float64{0, negZero}[r.IntN(2)]
					}
				}
				for k, z := range []float64{negZero, 0} {
					if c&(2<<k) != 0 && n > 0 {
						i := r.IntN(n)
						vals[i], valid[i] = z, true
					}
				}
				name := fmt.Sprintf("%s/n=%d/c=%d", typ, n, c)
				want := zeroOracle(typ, vals, valid)
				plain := floatArray(typ, vals, valid)
				dictNull := dictArray(typ, vals, valid, true)
				dict := dictArray(typ, vals, valid, false)
				for _, l := range append(simdLevels(), simdNone) {
					withSIMD(l, func() {
						for kind, a := range map[string]arrow.Array{"plain": plain, "dict": dict, "dict-nulls": dictNull} {
							got := updateWhole(t, a)
							where := fmt.Sprintf("%s/%s/simd=%d", name, kind, l)
							require.Equal(t, want.Count, got.Count, where)
							if want.Count > 0 {
								require.Equal(t, want.Min, got.Min, where+": min")
								require.Equal(t, want.Max, got.Max, where+": max")
							}
						}
					})
				}
				plain.Release()
				dict.Release()
				dictNull.Release()
			}
		}
	}
}

// zeroOracle is the state of the valid values (as the type holds them):
// their count and, as agg.FloatMin and FloatMax order them, their extremes.
func zeroOracle(typ arrow.DataType, vals []float64, valid []bool) agg.State {
	s := agg.New(column.FamilyFloat, agg.Default)
	mn, mx := math.Inf(1), math.Inf(-1)
	for i, x := range vals {
		if !valid[i] {
			continue
		}
		if typ.ID() == arrow.FLOAT32 {
			x = float64(float32(x))
		}
		s.Count++
		mn, mx = agg.FloatMin(mn, x), agg.FloatMax(mx, x)
	}
	s.Min[0], s.Max[0] = math.Float64bits(mn), math.Float64bits(mx)
	return s
}

func floatArray(typ arrow.DataType, vals []float64, valid []bool) arrow.Array {
	switch typ.ID() {
	case arrow.FLOAT32:
		b := array.NewFloat32Builder(memory.DefaultAllocator)
		defer b.Release()
		for _, x := range vals {
			b.Append(float32(x))
		}
		return withNulls(b.NewArray(), valid)
	default:
		b := array.NewFloat64Builder(memory.DefaultAllocator)
		defer b.Release()
		for _, x := range vals {
			b.Append(x)
		}
		return withNulls(b.NewArray(), valid)
	}
}

// withNulls is a with the validity valid, its value slots kept (a null's
// slot holds whatever a held).
func withNulls(a arrow.Array, valid []bool) arrow.Array {
	defer a.Release()
	bits := memory.NewResizableBuffer(memory.DefaultAllocator)
	defer bits.Release()
	bits.Resize((len(valid) + 7) / 8)
	clear(bits.Bytes())
	nulls := 0
	for i, v := range valid {
		if v {
			bits.Bytes()[i/8] |= 1 << (i % 8)
		} else {
			nulls++
		}
	}
	d := array.NewData(a.DataType(), a.Len(), []*memory.Buffer{bits, a.Data().Buffers()[1]}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// dictArray is vals dictionary-encoded: the dictionary is the values in
// order (with a null entry at its end that no index uses, when dictNulls:
// then the dictionary is not gathered) and index i points at value i.
func dictArray(typ arrow.DataType, vals []float64, valid []bool, dictNulls bool) arrow.Array {
	dv := append([]float64(nil), vals...)
	dvalid := make([]bool, len(vals))
	for i := range dvalid {
		dvalid[i] = true
	}
	if dictNulls {
		dv, dvalid = append(dv, 0), append(dvalid, false)
	}
	values := floatArray(typ, dv, dvalid)
	defer values.Release()
	ib := array.NewInt32Builder(memory.DefaultAllocator)
	defer ib.Release()
	for i := range vals {
		ib.Append(int32(i))
	}
	idx := withNulls(ib.NewArray(), valid)
	defer idx.Release()
	return array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: typ}, idx, values)
}

// updateWhole is the state of a, aggregated by one worker.
func updateWhole(t *testing.T, a arrow.Array) agg.State {
	v, err := arrow17.ViewOf(a)
	require.NoError(t, err)
	s := agg.New(v.Kind.Family(), agg.Default)
	views, states := [1]*column.View{&v}, [1]*agg.State{&s}
	require.NoError(t, (&CPU{Threads: 1}).Update(context.Background(), views[:], states[:]))
	return s
}
