package filter

import (
	"bytes"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
)

// stateOf is the partial state of rows [lo, hi) of c that agg's
// constructors make from the values (at times one that knows the counts
// alone, or none).
func stateOf(t *testing.T, rng *rand.Rand, c *tcol, lo, hi int) *agg.State {
	var count, nulls int64
	for r := lo; r < hi; r++ {
		if c.null[r] {
			nulls++
		} else {
			count++
		}
	}
	fam := c.in.Kind.Family()
	switch rng.IntN(8) {
	case 0:
		return nil
	case 1:
		s := agg.Counts(fam, count, nulls)
		return &s
	}
	var s agg.State
	switch fam {
	case column.FamilySigned, column.FamilyUnsigned, column.FamilyDecimal:
		var mn, mx *big.Int
		for r := lo; r < hi; r++ {
			if c.null[r] {
				continue
			}
			x := new(big.Rat).Mul(c.num[r], pow10(c.in.Scale))
			require.True(t, x.IsInt())
			if mn == nil || x.Num().Cmp(mn) < 0 {
				mn = x.Num()
			}
			if mx == nil || x.Num().Cmp(mx) > 0 {
				mx = x.Num()
			}
		}
		if mn == nil {
			mn, mx = new(big.Int), new(big.Int)
		}
		switch fam {
		case column.FamilySigned:
			s = agg.Signed(count, nulls, agg.Int192From(0), mn.Int64(), mx.Int64())
		case column.FamilyUnsigned:
			s = agg.Unsigned(count, nulls, agg.Int192From(0), mn.Uint64(), mx.Uint64())
		default:
			s = agg.Decimal(count, nulls, agg.Int192From(0), words128(mn), words128(mx))
		}
		if rng.IntN(3) == 0 {
			s = agg.Extremes(fam, count, nulls, s.Min, s.Max)
		}
	case column.FamilyFloat:
		mn, mx := math.Inf(1), math.Inf(-1)
		for r := lo; r < hi; r++ {
			if c.null[r] {
				continue
			}
			f := c.special[r]
			if c.num[r] != nil {
				f, _ = c.num[r].Float64()
				if c.num[r].Sign() == 0 && rng.IntN(2) == 0 {
					f = math.Copysign(0, -1) // the oracle's 0 may be either
				}
			}
			if !math.IsNaN(f) {
				mn, mx = agg.FloatMin(mn, f), agg.FloatMax(mx, f)
			}
		}
		s = agg.Float(count, nulls, 0, 0, 0, mn, mx)
	case column.FamilyBool:
		var trues int64
		for r := lo; r < hi; r++ {
			if !c.null[r] && c.bools[r] {
				trues++
			}
		}
		s = agg.Bool(count, nulls, trues)
	case column.FamilyBytes:
		var mn, mx []byte
		first := true
		for r := lo; r < hi; r++ {
			if c.null[r] {
				continue
			}
			if first || bytes.Compare(c.strs[r], mn) < 0 {
				mn = c.strs[r]
			}
			if first || bytes.Compare(c.strs[r], mx) > 0 {
				mx = c.strs[r]
			}
			first = false
		}
		s = agg.Bytes(count, nulls, mn, mx)
	default:
		s = agg.Counts(fam, count, nulls)
	}
	return &s
}

func TestMayMatchOracle(tt *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	pruned, kept := 0, 0
	for range 25 {
		n := 40
		cols := table(rng, n)
		in, _, byName := inputsViews(cols)
		for range 50 {
			e := randExpr(rng, cols, 2)
			p, err := Bind(e, in)
			require.NoError(tt, err)
			for range 4 {
				lo := rng.IntN(n)
				hi := lo + rng.IntN(min(8, n-lo)+1)
				stats := make([]*agg.State, len(cols))
				for i, c := range cols {
					stats[i] = stateOf(tt, rng, c, lo, hi)
				}
				if p.MayMatch(stats) {
					kept++
					continue
				}
				pruned++
				for r := lo; r < hi; r++ {
					require.NotEqual(tt, tru, oracle(e, byName, r), "%s pruned, but row %d matches", e, r)
				}
			}
		}
	}
	tt.Logf("pruned %d, kept %d", pruned, kept)
	require.Greater(tt, pruned, 700)
}

func TestMayMatchCases(tt *testing.T) {
	in := []Input{{Name: "x", Kind: column.Int32}, {Name: "f", Kind: column.Float64}, {Name: "s", Kind: column.Binary},
		{Name: "b", Kind: column.Bool}, {Name: "d", Kind: column.Decimal64, Scale: 2}, {Name: "u", Kind: column.Uint8}}
	st := func(s agg.State) *agg.State { return &s }
	for _, c := range []struct {
		src   string
		stats []*agg.State
		want  bool
	}{
		{"x > 10", []*agg.State{st(agg.Signed(5, 0, agg.Int192From(0), 1, 10))}, false},
		{"x > 10", []*agg.State{st(agg.Signed(5, 0, agg.Int192From(0), 1, 11))}, true},
		{"x >= 10.5", []*agg.State{st(agg.Signed(5, 0, agg.Int192From(0), 1, 10))}, false},
		{"x != 3", []*agg.State{st(agg.Signed(5, 0, agg.Int192From(0), 3, 3))}, false},
		{"not x = 3", []*agg.State{st(agg.Signed(5, 0, agg.Int192From(0), 3, 3))}, false},
		{"x not in (3, 4)", []*agg.State{st(agg.Signed(5, 0, agg.Int192From(0), 3, 3))}, false},
		{"x in (3, 4)", []*agg.State{st(agg.Signed(5, 0, agg.Int192From(0), 5, 9))}, false},
		{"x in (3, 6)", []*agg.State{st(agg.Signed(5, 0, agg.Int192From(0), 5, 9))}, true},
		{"x > 10", []*agg.State{st(agg.Counts(column.FamilySigned, 5, 0))}, true},
		{"x > 10", []*agg.State{nil}, true},
		{"x > 10", []*agg.State{st(agg.Unsigned(5, 0, agg.Int192From(0), 1, 100))}, true}, // another family: unknown
		{"x > 10", []*agg.State{st(agg.Nulls(column.FamilySigned, 5))}, false},
		{"x is null", []*agg.State{st(agg.Signed(5, 0, agg.Int192From(0), 1, 10))}, false},
		{"x is null", []*agg.State{st(agg.Counts(column.FamilySigned, 5, 1))}, true},
		{"x is not null", []*agg.State{st(agg.Nulls(column.FamilySigned, 5))}, false},
		{"x is null or x > 10", []*agg.State{st(agg.Signed(5, 0, agg.Int192From(0), 1, 10))}, false},
		{"x is null or x > 9", []*agg.State{st(agg.Signed(5, 0, agg.Int192From(0), 1, 10))}, true},
		{"f = 1", []*agg.State{nil, st(agg.Float(3, 0, 0, 0, 0, math.Inf(1), math.Inf(-1)))}, false}, // NaN alone
		{"f != 1", []*agg.State{nil, st(agg.Float(3, 0, 0, 0, 0, math.Inf(1), math.Inf(-1)))}, true},
		{"not f < 1", []*agg.State{nil, st(agg.Float(3, 0, 0, 0, 0, 0, 0.5))}, true}, // NaN may hide
		{"f > 0.5", []*agg.State{nil, st(agg.Float(3, 0, 0, 0, 0, 0, 0.5))}, false},
		{"f >= 0.5", []*agg.State{nil, st(agg.Float(3, 0, 0, 0, 0, 0, 0.5))}, true},
		{"f < 0", []*agg.State{nil, st(agg.Float(3, 0, 0, 0, 0, math.Copysign(0, -1), 1))}, false},
		{"f = 0", []*agg.State{nil, st(agg.Float(3, 0, 0, 0, 0, math.Copysign(0, -1), math.Copysign(0, -1)))}, true},
		{"f > 1e400", []*agg.State{nil, st(agg.Float(3, 0, 0, 0, 0, 0, math.MaxFloat64))}, false},
		{"f > 1e400", []*agg.State{nil, st(agg.Float(3, 0, 0, 0, 0, 0, math.Inf(1)))}, true},
		{`s = "b"`, []*agg.State{nil, nil, st(agg.Bytes(3, 0, []byte("a"), []byte("az")))}, false},
		{`s < "a"`, []*agg.State{nil, nil, st(agg.Bytes(3, 0, []byte("a"), []byte("az")))}, false},
		{`s <= "a"`, []*agg.State{nil, nil, st(agg.Bytes(3, 0, []byte("a"), []byte("az")))}, true},
		{`s != "a"`, []*agg.State{nil, nil, st(agg.Bytes(3, 0, []byte("a"), []byte("a")))}, false},
		{`s in ("b", "c")`, []*agg.State{nil, nil, st(agg.Bytes(3, 0, []byte("a"), []byte("az")))}, false},
		{`s not in ("a", "c")`, []*agg.State{nil, nil, st(agg.Bytes(3, 0, []byte("a"), []byte("a")))}, false},
		{"b = true", []*agg.State{nil, nil, nil, st(agg.Bool(3, 1, 0))}, false},
		{"b = false", []*agg.State{nil, nil, nil, st(agg.Bool(3, 1, 0))}, true},
		{"b != true", []*agg.State{nil, nil, nil, st(agg.Bool(3, 1, 3))}, false},
		{"d > 1.005", []*agg.State{nil, nil, nil, nil, st(agg.Decimal(3, 0, agg.Int192From(0), [2]uint64{uint64(1<<64 - 5), 1<<64 - 1}, [2]uint64{100, 0}))}, false},
		{"d > 1.005", []*agg.State{nil, nil, nil, nil, st(agg.Decimal(3, 0, agg.Int192From(0), [2]uint64{uint64(1<<64 - 5), 1<<64 - 1}, [2]uint64{101, 0}))}, true},
		{"d < -0.04", []*agg.State{nil, nil, nil, nil, st(agg.Decimal(3, 0, agg.Int192From(0), [2]uint64{uint64(1<<64 - 4), 1<<64 - 1}, [2]uint64{101, 0}))}, false},
		{"u > 255", []*agg.State{nil, nil, nil, nil, nil, nil}, false},
		{"u < 256", []*agg.State{nil, nil, nil, nil, nil, nil}, true},
		{"u < 256", []*agg.State{nil, nil, nil, nil, nil, st(agg.Nulls(column.FamilyUnsigned, 2))}, false},
	} {
		for len(c.stats) < len(in) {
			c.stats = append(c.stats, nil)
		}
		e, err := Parse(c.src)
		require.NoError(tt, err)
		p, err := Bind(e, in)
		require.NoError(tt, err)
		assert.Equal(tt, c.want, p.MayMatch(c.stats), c.src)
	}
}
