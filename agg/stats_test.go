package agg

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/column"
)

func TestSquaresExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ints := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, math.MinInt64 + 1, 1 << 32, -(1 << 32)}
	for range 1000 {
		ints = append(ints, int64(r.Uint64()))
	}
	for _, x := range ints {
		want := new(big.Int).Mul(big.NewInt(x), big.NewInt(x))
		require.Zero(t, want.Cmp(Square(x).Big()), "%d", x)
		u := uint64(x)
		bu := new(big.Int).SetUint64(u)
		require.Zero(t, new(big.Int).Mul(bu, bu).Cmp(SquareUnsigned(u).Big()), "%d", u)
	}
	decs := [][2]uint64{{0, 0}, {1, 0}, {math.MaxUint64, math.MaxUint64}, {0, 1 << 63}, {math.MaxUint64, math.MaxInt64},
		{0, 1}, {1, 1 << 63}}
	for range 1000 {
		decs = append(decs, [2]uint64{r.Uint64(), r.Uint64()})
	}
	for _, d := range decs {
		x := Int192From128(d[0], int64(d[1])).Big()
		want := new(big.Int).Mul(x, x)
		require.Zero(t, want.Cmp(SquareDecimal(d[0], d[1]).Big()), "%s", x)
	}
	// 2^63 squares of the largest magnitude fit: the sum does not wrap
	big63 := Square(math.MinInt64)
	sum := Uint320{}
	for range 64 {
		sum = sum.Add(big63)
	}
	require.Zero(t, new(big.Int).Lsh(big.NewInt(1), 132).Cmp(sum.Big()))
}

// sketchOfInts folds the hashes of values into a sketch.
func sketchOf(hashes []uint64) *Sketch {
	k := new(Sketch)
	for _, h := range hashes {
		k.Add(h)
	}
	return k
}

// TestSketchError checks approx_distinct on random data, with a fixed seed,
// against the exact number of distinct values: within 2% (the documented
// bound; the relative standard error is 0.81%), for random integers, runs
// of consecutive integers, floats and strings, each value seen one to three
// times.
func TestSketchError(t *testing.T) {
	r := rand.New(rand.NewPCG(20261125, 14))
	cards := []int{1, 2, 3, 10, 100, 1000, 5000, 12000, 20000, 50000, 100000, 300000, 1000000}
	if testing.Short() {
		cards = cards[:10]
	}
	kinds := []string{"random ints", "consecutive ints", "floats", "strings"}
	worst := 0.0
	for _, d := range cards {
		for _, kind := range kinds {
			if kind == "strings" && d > 100000 {
				continue
			}
			hashes := make([]uint64, 0, 2*d)
			base := r.Int64()
			for i := range d {
				var h uint64
				switch kind {
				case "random ints":
					h = HashInt(r.Uint64())
				case "consecutive ints":
					h = HashInt(uint64(base + int64(i)))
				case "floats":
					h = HashFloat(float64(base%1000) + float64(i)*0.25)
				case "strings":
					h = HashBytes([]byte("user-" + strconv.Itoa(i) + "@example.org"))
				}
				for range 1 + r.IntN(3) {
					hashes = append(hashes, h)
				}
			}
			r.Shuffle(len(hashes), func(i, j int) { hashes[i], hashes[j] = hashes[j], hashes[i] })
			st := New(column.FamilySigned, ApproxDistinct)
			part := Signed(int64(len(hashes)), 0, Int192{}, 0, 0)
			part.SetSketch(sketchOf(hashes))
			st.Merge(&part)
			got := st.Finalize(ApproxDistinct).Distinct
			rel := math.Abs(float64(got-int64(d))) / float64(d)
			worst = max(worst, rel)
			require.LessOrEqual(t, rel, 0.02, "%s, %d distinct: estimate %d", kind, d, got)
		}
	}
	t.Logf("largest relative error %.4f", worst)
}

// Up to SketchExact distinct values the count is exact, whatever the
// merges; beyond, the registers answer.
func TestSketchExactSmall(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for _, d := range []int{1, 26, 100, 1023, 1024, 1025, 3000} {
		s := New(column.FamilyUnsigned, ApproxDistinct)
		drawn := map[int]bool{}
		for range 7 {
			k := new(Sketch)
			for range 400 {
				x := r.IntN(d)
				drawn[x] = true
				k.Add(HashInt(uint64(x)))
			}
			p := Unsigned(400, 0, Int192{}, 0, 0)
			p.SetSketch(k)
			s.Merge(&p)
		}
		seen := len(drawn)
		got := s.Finalize(ApproxDistinct).Distinct
		if seen <= SketchExact {
			require.Equal(t, int64(seen), got, "%d", d)
			require.False(t, s.Sketch.overflow)
		} else {
			require.True(t, s.Sketch.overflow)
			require.InDelta(t, float64(seen), float64(got), 0.05*float64(seen), "%d", d)
		}
	}
	// SetExact: any order, and the overflow flag
	k := new(Sketch)
	k.SetExact([]uint64{5, 1, 3}, false)
	require.Equal(t, []uint64{1, 3, 5}, k.exact)
	require.Equal(t, 3.0, k.estimate())
	k.SetExact(nil, true)
	require.True(t, k.overflow)
}

func TestSketchEmptyAndSmall(t *testing.T) {
	require.Zero(t, (*Sketch)(nil).estimate())
	require.Zero(t, new(Sketch).estimate())
	s := New(column.FamilyFloat, ApproxDistinct)
	require.Equal(t, int64(0), s.Finalize(ApproxDistinct).Distinct)
	// one value seen 5 times: 1; the estimate never passes the count
	p := Float(5, 0, 5, 0, 0, 1, 1)
	p.SetSketch(sketchOf([]uint64{HashFloat(1), HashFloat(1), HashFloat(1), HashFloat(1), HashFloat(1)}))
	s.Merge(&p)
	require.Equal(t, int64(1), s.Finalize(ApproxDistinct).Distinct)
	// -0 and +0 are one value, so are all NaNs
	require.Equal(t, HashFloat(0), HashFloat(math.Copysign(0, -1)))
	require.Equal(t, HashFloat(math.NaN()), HashFloat(math.Float64frombits(0x7ff0000000000001)))
	require.NotEqual(t, HashFloat(1), HashFloat(-1))
	// ranks run from 1 to 51
	_, rank := SketchSlot(0)
	require.Equal(t, uint8(sketchQ+1), rank)
	_, rank = SketchSlot(math.MaxUint64)
	require.Equal(t, uint8(1), rank)
	reg, _ := SketchSlot(math.MaxUint64)
	require.Equal(t, uint32(SketchRegisters-1), reg)
	// booleans: exact, from the counts
	b := New(column.FamilyBool, ApproxDistinct)
	for _, part := range []State{Bool(3, 1, 3), Bool(2, 0, 0)} {
		b.Merge(&part)
		require.True(t, b.Tracks.Has(ApproxDistinct))
	}
	require.Equal(t, int64(2), b.Finalize(ApproxDistinct).Distinct)
}

// The sketch of a union is the merge of the sketches, whatever the grouping
// and order; merging into a copy leaves the original and the merged-in
// state alone.
func TestSketchMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	hashes := make([]uint64, 50000)
	for i := range hashes {
		hashes[i] = HashInt(uint64(r.IntN(20000)))
	}
	whole := sketchOf(hashes)
	var parts []State
	for lo := 0; lo < len(hashes); {
		hi := min(len(hashes), lo+1+r.IntN(9000))
		p := Signed(int64(hi-lo), 0, Int192{}, 0, 0)
		p.SetSketch(sketchOf(hashes[lo:hi]))
		parts = append(parts, p)
		lo = hi
	}
	for _, order := range [][]int{ascending(len(parts)), r.Perm(len(parts))} {
		s := New(column.FamilySigned, ApproxDistinct|Sum)
		for _, i := range order {
			before := marshal(t, parts[i])
			cp := s
			s.Merge(&parts[i])
			require.Equal(t, before, marshal(t, parts[i]), "the merged-in state changed")
			if cp.Sketch != nil {
				require.NotSame(t, cp.Sketch, s.Sketch, "merged in place into a shared sketch")
			}
		}
		require.Equal(t, *whole, *s.Sketch)
	}
	// A state that does not track the sketch drops it when merged.
	s := New(column.FamilySigned, ApproxDistinct)
	s.Merge(&parts[0])
	c := Counts(column.FamilySigned, 3, 0)
	s.Merge(&c)
	require.False(t, s.Tracks.Has(ApproxDistinct))
	require.Nil(t, s.Sketch)
}

func ascending(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// exactVariance is the sample variance of xs as an exact rational.
func exactVariance(xs []*big.Rat) *big.Rat {
	n := int64(len(xs))
	s, q := new(big.Rat), new(big.Rat)
	for _, x := range xs {
		s.Add(s, x)
		q.Add(q, new(big.Rat).Mul(x, x))
	}
	num := new(big.Rat).Mul(big.NewRat(n, 1), q)
	num.Sub(num, new(big.Rat).Mul(s, s))
	return num.Quo(num, big.NewRat(n*(n-1), 1))
}

// ratSqrt is the square root of r to 256 bits, rounded to a float64.
func ratSqrt(r *big.Rat) float64 {
	f := new(big.Float).SetPrec(256).SetRat(r)
	sd, _ := f.Sqrt(f).Float64()
	return sd
}

// Integer and decimal variance and stddev are exact before their one
// rounding: bit for bit the oracle's, for partial states merged in any
// grouping.
func TestVarianceExactIntegers(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, f := range []column.Family{column.FamilySigned, column.FamilyUnsigned, column.FamilyDecimal} {
		for _, n := range []int{0, 1, 2, 3, 17, 1000} {
			for _, scale := range []int32{0, 2, -3} {
				if f != column.FamilyDecimal && scale != 0 {
					continue
				}
				name := fmt.Sprintf("%s/n=%d/scale=%d", f, n, scale)
				s := New(f, Stddev)
				var xs []*big.Rat
				for lo := 0; lo < n; {
					hi := min(n, lo+1+r.IntN(50))
					var part State
					var sq Uint320
					switch f {
					case column.FamilySigned:
						sum := Int192{}
						for range hi - lo {
							x := int64(r.Uint64())
							if r.IntN(3) == 0 {
								x = math.MinInt64 + r.Int64N(3)
							}
							sum = sum.Add(Int192From(x))
							sq = sq.Add(Square(x))
							xs = append(xs, new(big.Rat).SetInt64(x))
						}
						part = Signed(int64(hi-lo), 0, sum, 0, 0)
					case column.FamilyUnsigned:
						sum := Int192{}
						for range hi - lo {
							x := r.Uint64()
							sum = sum.Add(Int192FromUint(x))
							sq = sq.Add(SquareUnsigned(x))
							xs = append(xs, new(big.Rat).SetInt(new(big.Int).SetUint64(x)))
						}
						part = Unsigned(int64(hi-lo), 0, sum, 0, 0)
					case column.FamilyDecimal:
						sum := Int192{}
						for range hi - lo {
							lo, hi := r.Uint64(), r.Uint64()
							if r.IntN(2) == 0 {
								hi = uint64(int64(lo) >> 63) // a 64-bit value
							}
							x := Int192From128(lo, int64(hi))
							sum = sum.Add(x)
							sq = sq.Add(SquareDecimal(lo, hi))
							xs = append(xs, new(big.Rat).SetInt(x.Big()))
						}
						part = Decimal(int64(hi-lo), 0, sum, [2]uint64{}, [2]uint64{})
					}
					part.SetSquares(sq)
					s.Merge(&part)
					lo = hi
				}
				fin := s.Finalize(Stddev | Variance)
				require.Equal(t, Stddev|Variance, fin.Set, name)
				v, ok := fin.Variance(scale)
				sd, sdok := fin.Stddev(scale)
				if n < 2 {
					require.False(t, ok, name)
					require.False(t, sdok, name)
					continue
				}
				require.True(t, ok, name)
				want := exactVariance(xs)
				p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(2*abs32(scale))), nil))
				if scale > 0 {
					want.Quo(want, p)
				} else {
					want.Mul(want, p)
				}
				wv, _ := want.Float64()
				require.Equal(t, wv, v, name)
				require.Equal(t, ratSqrt(want), sd, name)
			}
		}
	}
	// booleans: x² = x
	b := New(column.FamilyBool, Variance)
	for _, part := range []State{Bool(4, 1, 3), Bool(3, 0, 1)} {
		b.Merge(&part)
	}
	v, ok := finalized(b, Variance).Variance(0)
	require.True(t, ok)
	require.Equal(t, (7.0*4-16)/(7*6), v)
}

// Float variance is computed from the compensated sums without rounding
// them first: a column of a large mean and a small spread keeps its
// digits, and non-finite values make it NaN (or +Inf where only squares
// overflowed).
func TestVarianceFloats(t *testing.T) {
	xs := []float64{1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4}
	s := New(column.FamilyFloat, Variance)
	for _, x := range xs {
		p := Float(1, 0, x, 0, 0, x, x)
		p.SetFloatSquares([]float64{x * x}, []float64{math.FMA(x, x, -x*x)}, 0)
		s.Merge(&p)
	}
	v, ok := finalized(s, Variance).Variance(0)
	require.True(t, ok)
	require.Equal(t, 5.0/3, v)

	nan := Float(2, 0, math.Inf(1), 0, math.Inf(1), 1, math.Inf(1))
	nan.SetFloatSquares([]float64{1}, []float64{0}, math.Inf(1))
	s.Merge(&nan)
	v, _ = finalized(s, Variance).Variance(0)
	require.True(t, math.IsNaN(v))

	big := Float(2, 0, 2e200, 0, 0, 1e200, 1e200)
	big.SetFloatSquares([]float64{0}, []float64{0}, math.Inf(1))
	b := New(column.FamilyFloat, Variance)
	b.Merge(&big)
	v, _ = finalized(b, Variance).Variance(0)
	require.True(t, math.IsInf(v, 1))
	sd, _ := finalized(b, Stddev).Stddev(0)
	require.True(t, math.IsInf(sd, 1))
}

// statsStates is a state of each family with the statistics: sums of
// squares, and sketches of numbers (sig, fl: exact hashes) and of strings
// (by: one hash).
func statsStates() (sig, fl, by, bo, dec State) {
	k := new(Sketch)
	for i := range 1000 {
		k.Add(HashInt(uint64(i)))
	}
	sig = Signed(3, 1, Int192From(6), 1, 3)
	sig.SetSquares(Uint320{14, 0, 0, 0, 1})
	sig.SetSketch(k)
	fl = Float(2, 0, 3, 1e-20, 0, 1, 2)
	fl.SetFloatSquares([]float64{5}, []float64{1e-30}, 0)
	fl.SetSketch(k)
	by = Bytes(2, 0, []byte("a"), []byte("b"))
	strs := new(Sketch)
	strs.Add(HashBytes([]byte("a")))
	by.SetSketch(strs)
	bo = Bool(3, 0, 2)
	dec = Decimal(1, 0, Int192From(-5), [2]uint64{uint64(1<<64 - 5), math.MaxUint64}, [2]uint64{uint64(1<<64 - 5), math.MaxUint64})
	dec.SetSquares(SquareDecimal(uint64(1<<64-5), math.MaxUint64))
	dec.SetPositions(Positions{FirstRow: 0, LastRow: 0, MinRow: 0, MaxRow: 0})
	return sig, fl, by, bo, dec
}

// Version 5 states carry the sums of squares and the sketch; version 4
// states decode but for a sketch of numbers (hashed by an earlier
// function), version 3 states (without the statistics) still decode, and
// one that claims them is refused.
func TestSerializeStats(t *testing.T) {
	sig, fl, by, bo, dec := statsStates()
	for _, s := range []State{sig, fl, by, bo, dec} {
		b := marshal(t, s)
		require.Equal(t, byte(5), b[0])
		var back State
		require.NoError(t, back.UnmarshalBinary(b), "%s", s.Family)
		require.Equal(t, b, marshal(t, back), "%s", s.Family)
		require.Equal(t, s.Finalize(All), back.Finalize(All), "%s", s.Family)
		// truncated anywhere in the statistics: an error
		for cut := 1; cut < 30 && cut < len(b); cut++ {
			require.Error(t, back.UnmarshalBinary(b[:len(b)-cut]), "%s cut %d", s.Family, cut)
		}
	}
	// a register out of range; exact hashes out of order
	wide := new(Sketch)
	for i := range 5000 {
		wide.Add(HashInt(uint64(i)))
	}
	require.True(t, wide.overflow)
	ws := Signed(5000, 0, Int192{}, 0, 4999)
	ws.SetSketch(wide)
	b := marshal(t, ws)
	var back State
	require.NoError(t, back.UnmarshalBinary(b))
	require.Equal(t, b, marshal(t, back))
	b[len(b)-1] = sketchQ + 2
	require.ErrorIs(t, back.UnmarshalBinary(b), ErrState)
	b = marshal(t, sig)
	last := append([]byte{}, b[len(b)-8:]...)
	copy(b[len(b)-8:], b[len(b)-16:len(b)-8]) // swap the last two hashes
	copy(b[len(b)-16:], last)
	require.ErrorIs(t, back.UnmarshalBinary(b), ErrState)

	// version 3: the same bytes for a state without the statistics
	plain := Signed(2, 0, Int192From(3), 1, 2)
	v3 := marshal(t, plain)
	v3[0] = 3
	require.NoError(t, back.UnmarshalBinary(v3))
	require.Equal(t, plain.Finalize(Default), back.Finalize(Default))
	claims := append([]byte{}, marshal(t, sig)...)
	claims[0] = 3
	require.ErrorIs(t, back.UnmarshalBinary(claims), ErrState, "version 3 had no statistics")
	// version 4: the same layout; its sketches of strings are today's, its
	// sketches of numbers are not
	for _, s := range []State{sig, fl, dec} {
		v4 := marshal(t, s)
		v4[0] = 4
		err := back.UnmarshalBinary(v4)
		if s.Sketch == nil {
			require.NoError(t, err, "%s", s.Family)
			require.Equal(t, s.Finalize(All), back.Finalize(All), "%s", s.Family)
			continue
		}
		require.ErrorIs(t, err, ErrState, "%s", s.Family)
		require.ErrorContains(t, err, "version 4 sketch", "%s", s.Family)
	}
	strs := new(Sketch)
	strs.Add(HashBytes([]byte("a")))
	by.SetSketch(strs)
	v4 := marshal(t, by)
	v4[0] = 4
	require.NoError(t, back.UnmarshalBinary(v4))
	require.Equal(t, by.Finalize(All), back.Finalize(All))
	// the Tracks of version 5 are checked like version 3's
	tr := marshal(t, plain)
	tracks := binary.AppendUvarint(nil, uint64(Default))
	bad := append(append([]byte{}, tr[:len(tr)-len(tracks)]...), binary.AppendUvarint(nil, uint64(Default|Stddev))...)
	require.ErrorIs(t, back.UnmarshalBinary(bad), ErrState, "stddev without variance")
}

func finalized(s State, set Set) *Final {
	f := s.Finalize(set)
	return &f
}

// A clone of a sketch with more hashes folded in merges with the original
// as the sketch of all the hashes: the clone itself once both overflowed
// (no copy), a full merge before; a state seeded with an overflowed sketch
// (SeedSketch) merged with the seed's state is the state of all the values,
// its exact hashes too while there are at most SketchExact.
func TestSketchCloneAndSeed(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{10, SketchExact, 5000} {
		first := make([]uint64, n)
		for i := range first {
			first[i] = r.Uint64()
		}
		more := []uint64{r.Uint64(), r.Uint64(), first[0]}
		a := sketchOf(first)
		b := a.Clone()
		require.Equal(t, a.Registers, b.Registers)
		require.Equal(t, a.Overflowed(), b.Overflowed())
		for _, h := range more {
			b.Add(h)
		}
		whole := sketchOf(append(slices.Clone(first), more...))
		m := mergeSketches(a, b)
		require.Equal(t, whole.Registers, m.Registers, "n=%d", n)
		require.Equal(t, whole.exact, m.exact, "n=%d", n)
		require.Equal(t, whole.overflow, m.overflow, "n=%d", n)
		if n > SketchExact {
			require.Same(t, b, m, "the clone is the union")
			require.Same(t, b, mergeSketches(b, a))
		} else {
			require.NotSame(t, b, m)
		}
		require.Equal(t, sketchOf(first).Registers, a.Registers, "the original is not written")

		// Seeding: the seeded state of the more hashes, merged with the
		// seed's state.
		seedState := Signed(int64(n), 0, Int192{}, 0, 0)
		seedState.SetSketch(a)
		s := New(column.FamilySigned, ApproxDistinct)
		s.SeedSketch(a)
		require.Same(t, a, s.Sketch)
		part := Signed(int64(len(more)), 0, Int192{}, 0, 0)
		part.SetSketch(b)
		s.Merge(&part)
		total := New(column.FamilySigned, ApproxDistinct)
		total.Merge(&seedState)
		total.Merge(&s)
		require.Equal(t, whole.Registers, total.Sketch.Registers, "n=%d", n)
		require.Equal(t, whole.exact, total.Sketch.exact, "n=%d", n)
		require.Equal(t, whole.overflow, total.Sketch.Overflowed(), "n=%d", n)
	}
	big := make([]uint64, 2*SketchExact)
	for i := range big {
		big[i] = r.Uint64()
	}
	s := New(column.FamilySigned, Sum)
	s.SeedSketch(sketchOf(big))
	require.Nil(t, s.Sketch, "a state that does not track approx_distinct takes no seed")
}

// unhashInt inverts HashInt, round by round: HashInt is a bijection of the
// 64-bit words, so distinct integers (and floats, by their canonical bits)
// never share a hash.
func unhashInt(h uint64) uint64 {
	lo, hi := uint32(h>>32), uint32(h)
	lo ^= hashRound(hi, hashK3, hashD3)
	hi ^= hashRound(lo, hashK2, hashD2)
	lo ^= hashRound(hi, hashK1, 0)
	return uint64(hi)<<32 | uint64(lo)
}

func TestHashIntInvertible(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 17))
	xs := []uint64{0, 1, math.MaxUint64, 1 << 31, 1<<32 - 1, 1 << 32, 1 << 63}
	for range 100000 {
		xs = append(xs, r.Uint64(), uint64(r.Int32()), uint64(int64(r.Int32())))
	}
	for _, x := range xs {
		require.Equal(t, x, unhashInt(HashInt(x)), "%#x", x)
	}
	// the first round of a sign-extended 32-bit value is lo ^= hi (the GPU
	// kernels' shortcut for 32-bit columns)
	for _, x := range []int32{0, 1, -1, math.MinInt32, math.MaxInt32, 12345, -98765} {
		hi := uint32(uint64(int64(x)) >> 32)
		require.Equal(t, uint32(x)^hi, uint32(x)^hashRound(hi, hashK1, 0))
	}
}

// A flip of any input bit flips each bit of the hash's top word (a
// register and the first 18 bits of its rank) about half the time, for
// random inputs and for runs of small integers.
func TestHashIntAvalanche(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 20000
	for _, kind := range []string{"random", "small"} {
		var flips [64][32]int
		for i := range n {
			x := r.Uint64()
			if kind == "small" {
				x = uint64(i)
			}
			h := HashInt(x)
			for b := range 64 {
				d := (h ^ HashInt(x^1<<b)) >> 32
				for o := range 32 {
					flips[b][o] += int(d >> o & 1)
				}
			}
		}
		for b := range 64 {
			for o := range 32 {
				// 0.5 ± 0.025: seven standard deviations of n draws
				require.InDelta(t, 0.5, float64(flips[b][o])/n, 0.025, "%s: input bit %d, hash bit %d", kind, b, o+32)
			}
		}
	}
}

// FuzzUnmarshalState: a partial state from outside (a state of any family,
// with the statistics and a sketch, of today's version or an earlier one)
// decodes or is refused with ErrState, never a panic; what decodes encodes
// again to bytes that decode to the same state, and finalizes.
func FuzzUnmarshalState(f *testing.F) {
	sig, fl, by, bo, dec := statsStates()
	wide := new(Sketch) // (dense: more hashes than it keeps)
	for i := range 3000 {
		wide.Add(HashInt(uint64(i)))
	}
	dense := Float(2, 0, 3, 1e-20, 0, 1, 2)
	dense.SetSketch(wide)
	for _, s := range []State{sig, fl, by, bo, dec, dense, Signed(2, 0, Int192From(3), 1, 2)} {
		b, err := s.MarshalBinary()
		require.NoError(f, err)
		f.Add(b)
		for _, v := range []byte{4, 3, 2} {
			old := append([]byte{}, b...)
			old[0] = v
			f.Add(old)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var s State
		if err := s.UnmarshalBinary(b); err != nil {
			require.ErrorIs(t, err, ErrState)
			return
		}
		again, err := s.MarshalBinary()
		require.NoError(t, err)
		var back State
		require.NoError(t, back.UnmarshalBinary(again))
		b2, err := back.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, again, b2)
		_ = back.Finalize(back.Tracks)
	})
}
