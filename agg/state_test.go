package agg

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/column"
)

// marshal is the state's serialized form: a deep snapshot of every field.
func marshal(t *testing.T, s State) []byte {
	t.Helper()
	b, err := s.MarshalBinary()
	require.NoError(t, err)
	return b
}

// sample returns partial states of family f, with and without the ordered
// aggregates, whose extremes and ends differ from state to state.
func sample(f column.Family) []State {
	var out []State
	for i, v := range []int64{7, -3, 12, 5} {
		var s State
		switch f {
		case column.FamilySigned:
			s = Signed(2, 1, Int192From(2*v), v, v+1)
		case column.FamilyUnsigned:
			s = Unsigned(2, 1, Int192From(2*(v+3)), uint64(v+3), uint64(v+4))
		case column.FamilyFloat:
			s = Float(2, 1, float64(v)/3, 1e-20, 0, float64(v), float64(v)+0.5)
		case column.FamilyDecimal:
			s = Decimal(2, 1, Int192From(2*v), [2]uint64{uint64(v), uint64(v >> 63)}, [2]uint64{uint64(v + 1), uint64(v >> 63)})
		case column.FamilyBool:
			s = Bool(2, 1, int64(i%3))
		case column.FamilyBytes:
			s = Bytes(2, 1, []byte{byte('m' + v), 'x'}, []byte{byte('n' + v), 'y', 'z'})
		}
		if i%2 == 1 {
			b := []byte{byte('a' + i), 'q'}
			s.SetPositions(Positions{FirstRow: int64(10 * i), LastRow: int64(10*i + 1), First: [2]uint64{uint64(i)},
				Last: [2]uint64{uint64(i + 1)}, BFirst: b, BLast: b, MinRow: int64(10 * i), MaxRow: int64(10*i + 1)})
		}
		out = append(out, s)
	}
	return out
}

var families = []column.Family{column.FamilySigned, column.FamilyUnsigned, column.FamilyFloat,
	column.FamilyDecimal, column.FamilyBool, column.FamilyBytes}

// Merging into a copy of a state must leave the original as it was: a State
// is a plain value. Merge once wrote a bytes column's new extremes (and first
// and last values) into the original's buffers.
func TestMergeIntoCopyLeavesOriginal(t *testing.T) {
	for _, f := range families {
		states := sample(f)
		for i := range states {
			for j := range states {
				orig := New(f, Ordered)
				orig.Merge(&states[i])
				before := marshal(t, orig)
				cp := orig
				cp.Merge(&states[j])
				cp.AddNulls(3)
				cp.ShiftRows(100)
				require.Equal(t, before, marshal(t, orig), "%s: merging state %d into a copy of state %d changed the original", f, j, i)
				// and the other way round: the merged-in state is untouched
				o := states[j]
				ob := marshal(t, o)
				cp2 := orig
				cp2.Merge(&o)
				require.Equal(t, ob, marshal(t, o))
			}
		}
	}
}

// The case of the report: an accumulator's string column with min "mmm";
// a program merges a state with min "aaa" into the copy it was handed.
func TestMergeIntoCopyBytesMin(t *testing.T) {
	acc := New(column.FamilyBytes, 0)
	part := Bytes(1, 0, []byte("mmm"), []byte("mmm"))
	acc.Merge(&part)
	handed := acc // what Results()[0].State gives a program
	other := Bytes(1, 0, []byte("aaa"), []byte("aaa"))
	handed.Merge(&other)
	require.Equal(t, "aaa", string(handed.BMin))
	require.Equal(t, "mmm", string(acc.BMin), "merging into a copy rewrote the accumulator's min")
	require.Equal(t, "mmm", string(acc.BMax))
}

func TestConstructorsWithoutValuesAreIdentity(t *testing.T) {
	for _, f := range families {
		id := New(f, 0)
		var s State
		switch f {
		case column.FamilySigned:
			s = Signed(0, 4, Int192From(9), 1, 2)
		case column.FamilyUnsigned:
			s = Unsigned(0, 4, Int192From(9), 1, 2)
		case column.FamilyFloat:
			s = Float(0, 4, 1, 2, 3, 1, 2)
		case column.FamilyDecimal:
			s = Decimal(0, 4, Int192From(9), [2]uint64{1}, [2]uint64{2})
		case column.FamilyBool:
			s = Bool(0, 4, 3)
		case column.FamilyBytes:
			s = Bytes(0, 4, []byte("a"), []byte("b"))
		}
		id.AddNulls(4)
		require.Equal(t, marshal(t, id), marshal(t, s), "%s", f)
		nulls := New(f, 0)
		run := Nulls(f, 4)
		nulls.Merge(&run)
		require.Equal(t, marshal(t, id), marshal(t, nulls), "%s", f)
	}
}

func TestFloatLanesMatchesMerges(t *testing.T) {
	sums := []float64{1e16, 1, -1e16, 3.5}
	comps := []float64{0, 1e-17, 0, 0}
	s := FloatLanes(4, 0, sums, comps, math.Inf(1), -2, 7)
	require.True(t, math.IsInf(s.FloatSum(), 1))
	s = FloatLanes(4, 0, sums, comps, 0, -2, 7)
	require.Equal(t, 4.5, s.FloatSum())
	require.Equal(t, -2.0, s.FloatExtreme(false))
	require.Equal(t, 7.0, s.FloatExtreme(true))
}

func TestSetParseAndNames(t *testing.T) {
	s, err := Parse("sum, MAX,count")
	require.NoError(t, err)
	require.Equal(t, Sum|Max|Count, s)
	require.Equal(t, "count,sum,max", s.String())
	s, err = Parse("AVG,min")
	require.NoError(t, err)
	require.Equal(t, Mean|Min, s, "avg is mean")
	_, err = Parse("average")
	require.ErrorContains(t, err, "unknown aggregate")
	_, err = Parse(" , ")
	require.Error(t, err)
	require.Equal(t, Default, Normalize(0))
	require.Equal(t, Sum, Normalize(Sum))
	require.Len(t, AllNames(), 10)
}

// A state knows what both merged states know: a partial state of counts
// alone (or of statistics' extremes) merged into one asked for sums loses
// the sum, rather than reporting the partial's missing sum as zero.
func TestTracksIntersect(t *testing.T) {
	s := New(column.FamilySigned, Default)
	require.Equal(t, Default, s.Tracks)
	full := Signed(2, 0, Int192From(9), 4, 5)
	s.Merge(&full)
	require.Equal(t, Default, s.Tracks)
	counts := Counts(column.FamilySigned, 3, 1)
	s.Merge(&counts)
	require.Equal(t, Count|NullCount, s.Tracks)
	require.Equal(t, int64(5), s.Count)
	require.Equal(t, int64(1), s.NullCount)

	o := New(column.FamilyFloat, Max|First)
	require.Equal(t, Count|NullCount|Min|Max|Ordered, o.Tracks)
	require.True(t, o.Ordered())
	part := Float(1, 0, 2, 0, 0, 2, 2)
	o.Merge(&part) // no positions: the state no longer knows them
	require.False(t, o.Ordered())

	stats := Extremes(column.FamilyUnsigned, 4, 0, [2]uint64{1}, [2]uint64{9})
	u := New(column.FamilyUnsigned, Min|Max|Count)
	u.Merge(&stats)
	require.Equal(t, Count|NullCount|Min|Max, u.Tracks)
}

// Version 2 states (a flag byte for the ordered aggregates where version 3
// has the uvarint of Tracks) still decode.
func TestUnmarshalVersion2(t *testing.T) {
	s := Signed(2, 1, Int192From(7), 3, 4)
	b := marshal(t, s)
	tracks := binary.AppendUvarint(nil, uint64(Default))
	v2 := append([]byte{2}, b[1:len(b)-len(tracks)]...)
	v2 = append(v2, 0)
	var back State
	require.NoError(t, back.UnmarshalBinary(v2))
	require.Equal(t, b, marshal(t, back))
	require.Error(t, back.UnmarshalBinary(append([]byte{9}, b[1:]...)))
	bad := append(append([]byte{}, b[:len(b)-len(tracks)]...), binary.AppendUvarint(nil, uint64(Sum))...)
	require.ErrorIs(t, back.UnmarshalBinary(bad), ErrState, "Sum without the counts and Mean is no state's Tracks")
}

func TestFinalize(t *testing.T) {
	s := New(column.FamilySigned, Default)
	p := Signed(3, 1, Int192From(-7), -5, 4)
	s.Merge(&p)
	f := s.Finalize(Sum | Min | Max | Mean)
	require.Equal(t, Sum|Min|Max|Mean|Count|NullCount, f.Set|Count|NullCount)
	require.True(t, f.Valid())
	require.Equal(t, int64(-5), int64(f.Min.Bits[0]))
	require.Equal(t, int64(4), int64(f.Max.Bits[0]))
	m, ok := f.Mean(0)
	require.True(t, ok)
	require.Equal(t, -7.0/3, m)
	m, _ = f.Mean(2) // a decimal of scale 2: -0.07 / 3
	require.Equal(t, -0.07/3, m)
	m, _ = f.Mean(-1) // scale -1: -70 / 3
	require.Equal(t, -70.0/3, m)

	// what the state does not track is not answered
	c := Counts(column.FamilySigned, 2, 0)
	s.Merge(&c)
	require.Equal(t, Count|NullCount, s.Finalize(Default).Set)

	// floats: every valid value NaN gives NaN extremes; one value keeps its
	// bits (no NaN rule)
	fl := New(column.FamilyFloat, All)
	nan := Float(2, 0, math.NaN(), 0, math.NaN(), math.Inf(1), math.Inf(-1))
	nan.SetPositions(Positions{FirstRow: 4, LastRow: 5, First: [2]uint64{math.Float64bits(math.Copysign(0, -1))},
		Last: [2]uint64{math.Float64bits(math.NaN())}, MinRow: -1, MaxRow: -1})
	fl.Merge(&nan)
	ff := fl.Finalize(All)
	require.True(t, math.IsNaN(ff.Min.Float))
	require.True(t, math.IsNaN(ff.Max.Float))
	require.True(t, math.IsNaN(ff.FloatSum))
	require.True(t, math.Signbit(ff.First.Float))
	require.Equal(t, int64(4), ff.FirstRow)

	// booleans: min is true only when every value is
	b := New(column.FamilyBool, 0)
	bp := Bool(3, 0, 2)
	b.Merge(&bp)
	bf := b.Finalize(Min | Max | Mean)
	require.False(t, bf.Min.Bool)
	require.True(t, bf.Max.Bool)
	m, _ = bf.Mean(0)
	require.Equal(t, 2.0/3, m)

	// bytes: no mean
	y := New(column.FamilyBytes, 0)
	yp := Bytes(1, 0, []byte("a"), []byte("b"))
	y.Merge(&yp)
	yf := y.Finalize(0)
	require.Equal(t, "a", string(yf.Min.Bytes))
	_, ok = yf.Mean(0)
	require.False(t, ok)
	empty := New(column.FamilySigned, 0)
	ef := empty.Finalize(0)
	_, ok = ef.Mean(0)
	require.False(t, ok, "no mean without values")
}

// A state of the counts family (lists, maps, ... whose values are neither
// ordered nor summed) tracks count and null_count alone, whatever is asked:
// the rest is not answered, never reported as zero.
func TestCountsFamily(t *testing.T) {
	for _, set := range []Set{0, Default, All, Sum | Min, First, Count} {
		s := New(column.FamilyCounts, set)
		require.Equal(t, Count|NullCount, s.Tracks, "%s", set)
		require.False(t, s.Ordered())
		a, b := Counts(column.FamilyCounts, 5, 2), Nulls(column.FamilyCounts, 3)
		s.Merge(&a)
		s.Merge(&b)
		f := s.Finalize(set)
		require.Equal(t, Normalize(set)&(Count|NullCount), f.Set, "%s", set)
		require.Equal(t, int64(5), f.Count)
		require.Equal(t, int64(5), f.NullCount)

		var back State
		require.NoError(t, back.UnmarshalBinary(marshal(t, s)))
		require.Equal(t, s, back)
	}
	require.Equal(t, Count|NullCount, Answers(column.FamilyCounts))
	require.Equal(t, All, Answers(column.FamilySigned))

	// A serialized counts state that claims more is refused.
	s := New(column.FamilyCounts, 0)
	b := marshal(t, s)
	tracks := binary.AppendUvarint(nil, uint64(Count|NullCount))
	bad := append(append([]byte{}, b[:len(b)-len(tracks)]...), binary.AppendUvarint(nil, uint64(Default))...)
	var back State
	require.ErrorIs(t, back.UnmarshalBinary(bad), ErrState)
	v2 := append([]byte{2}, b[1:len(b)-len(tracks)]...)
	require.ErrorIs(t, back.UnmarshalBinary(append(v2, 0)), ErrState, "no version 2 state is of the counts family")
	require.ErrorIs(t, back.UnmarshalBinary(append([]byte{stateVersion, byte(column.FamilyCounts + 1)}, b[2:]...)), ErrState)
}
