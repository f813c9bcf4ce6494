package filter

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/column"
)

// tcol is a column of a test table: its view, and its values as the oracle
// reads them (a dictionary's looked up), row by row.
type tcol struct {
	in      Input
	null    []bool
	num     []*big.Rat // integer, decimal (scaled) and finite float values
	special []float64  // floats: NaN or ±Inf where num is nil
	bools   []bool
	strs    [][]byte
	view    *column.View

	// what literals the generator draws from
	litNums []*big.Rat
	litStrs []string
}

type tri uint8

const (
	fls tri = iota
	tru
	unk
)

func triOf(b bool) tri {
	if b {
		return tru
	}
	return fls
}

func (t tri) not() tri {
	switch t {
	case tru:
		return fls
	case fls:
		return tru
	}
	return unk
}

func triAnd(a, b tri) tri {
	switch {
	case a == fls || b == fls:
		return fls
	case a == unk || b == unk:
		return unk
	}
	return tru
}

func triOr(a, b tri) tri {
	switch {
	case a == tru || b == tru:
		return tru
	case a == unk || b == unk:
		return unk
	}
	return fls
}

func applyOp(op Op, c int) bool {
	switch op {
	case Eq:
		return c == 0
	case Ne:
		return c != 0
	case Lt:
		return c < 0
	case Le:
		return c <= 0
	case Gt:
		return c > 0
	case Ge:
		return c >= 0
	}
	panic("op")
}

// oracleCompare is `col op lit` at row r, the slow and obvious way.
func oracleCompare(c *tcol, r int, op Op, lit Literal) tri {
	if c.null[r] {
		return unk
	}
	var cmp int
	switch c.in.Kind.Family() {
	case column.FamilyBytes:
		cmp = bytes.Compare(c.strs[r], []byte(lit.Str))
	case column.FamilyBool:
		x, y := 0, 0
		if c.bools[r] {
			x = 1
		}
		if lit.Bool {
			y = 1
		}
		cmp = x - y
	default:
		if c.num[r] == nil {
			f := c.special[r]
			if math.IsNaN(f) {
				return triOf(op == Ne) // IEEE: NaN is unordered, != holds
			}
			cmp = 1
			if f < 0 {
				cmp = -1
			}
		} else {
			cmp = c.num[r].Cmp(lit.Num)
		}
	}
	return triOf(applyOp(op, cmp))
}

func oracle(e Expr, cols map[string]*tcol, r int) tri {
	switch e := e.(type) {
	case Compare:
		return oracleCompare(cols[e.Column], r, e.Op, e.Value)
	case In:
		t := fls
		for _, v := range e.Values {
			t = triOr(t, oracleCompare(cols[e.Column], r, Eq, v))
		}
		if e.Not {
			return t.not()
		}
		return t
	case IsNull:
		return triOf(cols[e.Column].null[r] != e.Not)
	case And:
		return triAnd(oracle(e.L, cols, r), oracle(e.R, cols, r))
	case Or:
		return triOr(oracle(e.L, cols, r), oracle(e.R, cols, r))
	case Not:
		return oracle(e.X, cols, r).not()
	}
	panic(fmt.Sprintf("node %T", e))
}

// validity is a bitmap whose bits [off, off+n) say !null, the others random.
func validity(rng *rand.Rand, null []bool, off int) []byte {
	b := make([]byte, (off+len(null)+7)/8+rng.IntN(3))
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	for i, n := range null {
		k := off + i
		if n {
			b[k>>3] &^= 1 << (k & 7)
		} else {
			b[k>>3] |= 1 << (k & 7)
		}
	}
	return b
}

// fixedBuffer lays out vals after off random elements.
func fixedBuffer[T column.Number](rng *rand.Rand, vals []T, off int) []byte {
	var zero T
	w := binary.Size(zero)
	b := make([]byte, (off+len(vals))*w)
	for i := range b[:off*w] {
		b[i] = byte(rng.Uint32())
	}
	copy(column.Slice[T](b)[off:], vals)
	return b
}

// withNulls gives v's view random offsets and a validity bitmap for null
// (none at times when nothing is null).
func withNulls(rng *rand.Rand, v *column.View, null []bool) {
	v.Len = len(null)
	nulls := 0
	for _, n := range null {
		if n {
			nulls++
		}
	}
	v.NullCount = nulls
	if nulls == 0 && rng.IntN(2) == 0 {
		return
	}
	v.ValidityOffset = rng.IntN(20)
	v.Validity = validity(rng, null, v.ValidityOffset)
}

func randNulls(rng *rand.Rand, n int) []bool {
	null := make([]bool, n)
	p := []float64{0, 0.1, 0.5, 1}[rng.IntN(4)]
	for i := range null {
		null[i] = rng.Float64() < p
	}
	return null
}

func pick[T any](rng *rand.Rand, pool []T) T { return pool[rng.IntN(len(pool))] }

func ratOfInt(x *big.Int) *big.Rat { return new(big.Rat).SetInt(x) }

// intColumn is a column of an integer kind of bits bits.
func intColumn[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64](rng *rand.Rand, name string, kind column.Kind, n int) *tcol {
	lo, hi, _ := domain(kind)
	pool := []*big.Int{lo, new(big.Int).Add(lo, big.NewInt(1)), big.NewInt(0), big.NewInt(1), big.NewInt(2), big.NewInt(10),
		big.NewInt(100), new(big.Int).Sub(hi, big.NewInt(1)), hi}
	if lo.Sign() < 0 {
		pool = append(pool, big.NewInt(-1), big.NewInt(-10))
	}
	c := &tcol{in: Input{Name: name, Kind: kind}, null: randNulls(rng, n)}
	vals := make([]T, n)
	for i := range vals {
		var x *big.Int
		if rng.IntN(3) == 0 {
			vals[i] = T(rng.Uint64())
			if lo.Sign() < 0 {
				x = big.NewInt(int64(vals[i]))
			} else {
				x = new(big.Int).SetUint64(uint64(vals[i]))
			}
		} else {
			x = pick(rng, pool)
			if lo.Sign() < 0 {
				vals[i] = T(x.Int64())
			} else {
				vals[i] = T(x.Uint64())
			}
		}
		c.num = append(c.num, ratOfInt(x))
	}
	off := rng.IntN(10)
	c.view = &column.View{Type: column.TypeName(kind.String()), Kind: kind, Values: fixedBuffer(rng, vals, off), Offset: off}
	withNulls(rng, c.view, c.null)
	for _, x := range pool {
		c.litNums = append(c.litNums, ratOfInt(x), ratOfInt(new(big.Int).Add(x, big.NewInt(1))), ratOfInt(new(big.Int).Sub(x, big.NewInt(1))))
	}
	for _, s := range []string{"1000", "-129", "256", "65536", "2147483648", "9223372036854775808", "18446744073709551616",
		"-9223372036854775809", "10.5", "-0.5", "127.5", "0.25", "-128.5", "1e30", "-1e30"} {
		r, _ := new(big.Rat).SetString(s)
		c.litNums = append(c.litNums, r)
	}
	return c
}

var floatPool = []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, -1, 0.5, 1.5, 0.1, 1e300, -1e-300,
	5e-324, math.MaxFloat64, -2.5, 100, math.MaxFloat32, 1e-45, 65504}

func floatColumn(rng *rand.Rand, name string, kind column.Kind, n int) *tcol {
	c := &tcol{in: Input{Name: name, Kind: kind}, null: randNulls(rng, n)}
	f64 := make([]float64, n)
	for i := range f64 {
		f := pick(rng, floatPool)
		if rng.IntN(3) == 0 {
			f = rng.NormFloat64() * 100
		}
		switch kind {
		case column.Float32:
			f = float64(float32(f))
		case column.Float16:
			f = column.HalfToFloat64(column.HalfFromFloat64(f))
		}
		f64[i] = f
		if math.IsNaN(f) || math.IsInf(f, 0) {
			c.num = append(c.num, nil)
			c.special = append(c.special, f)
		} else {
			c.num = append(c.num, new(big.Rat).SetFloat64(f))
			c.special = append(c.special, 0)
		}
	}
	off := rng.IntN(10)
	var buf []byte
	switch kind {
	case column.Float64:
		buf = fixedBuffer(rng, f64, off)
	case column.Float32:
		buf = fixedBuffer(rng, convert[float32](f64), off)
	case column.Float16:
		h := make([]uint16, n)
		for i, f := range f64 {
			h[i] = column.HalfFromFloat64(f)
		}
		buf = fixedBuffer(rng, h, off)
	}
	c.view = &column.View{Type: column.TypeName(kind.String()), Kind: kind, Values: buf, Offset: off}
	withNulls(rng, c.view, c.null)
	for _, f := range floatPool {
		if !math.IsNaN(f) && !math.IsInf(f, 0) {
			r := new(big.Rat).SetFloat64(f)
			c.litNums = append(c.litNums, r, new(big.Rat).Neg(r))
		}
	}
	for _, s := range []string{"0.1", "1e400", "-1e400", "1e-400", "-1e-400", "3.4028235677973366e38", "3.4028236e38", "65520",
		"0.30000000000000001", "1.0000000000000000000001"} {
		r, _ := new(big.Rat).SetString(s)
		c.litNums = append(c.litNums, r)
	}
	return c
}

func pow10(s int32) *big.Rat {
	return new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s)), nil))
}

// decimalColumn is a decimal column of scale scale.
func decimalColumn(rng *rand.Rand, name string, kind column.Kind, scale int32, n int) *tcol {
	lo, hi, _ := domain(kind)
	pool := []*big.Int{lo, hi, big.NewInt(0), big.NewInt(1), big.NewInt(-1), big.NewInt(100), big.NewInt(-100), big.NewInt(1005),
		big.NewInt(99), big.NewInt(101)}
	if kind == column.Decimal128 {
		big100 := new(big.Int).Lsh(big.NewInt(1), 100)
		pool = append(pool, big100, new(big.Int).Neg(big100))
	}
	c := &tcol{in: Input{Name: name, Kind: kind, Scale: scale}, null: randNulls(rng, n)}
	unscaled := make([]*big.Int, n)
	for i := range unscaled {
		x := pick(rng, pool)
		if rng.IntN(3) == 0 {
			x = big.NewInt(rng.Int64N(2_000_000) - 1_000_000)
		}
		unscaled[i] = x
		c.num = append(c.num, new(big.Rat).Quo(ratOfInt(x), pow10(scale)))
	}
	off := rng.IntN(10)
	var buf []byte
	switch kind {
	case column.Decimal32:
		v := make([]int32, n)
		for i, x := range unscaled {
			v[i] = int32(x.Int64())
		}
		buf = fixedBuffer(rng, v, off)
	case column.Decimal64:
		v := make([]int64, n)
		for i, x := range unscaled {
			v[i] = x.Int64()
		}
		buf = fixedBuffer(rng, v, off)
	case column.Decimal128:
		v := make([]uint64, 2*n)
		for i, x := range unscaled {
			w := words128(x)
			v[2*i], v[2*i+1] = w[0], w[1]
		}
		b := fixedBuffer(rng, v, 2*off)
		buf = b
	}
	c.view = &column.View{Type: column.TypeName(kind.String()), Kind: kind, Values: buf, Offset: off}
	withNulls(rng, c.view, c.null)
	tiny := new(big.Rat).Quo(big.NewRat(1, 1), pow10(scale+1))
	for _, x := range pool {
		r := new(big.Rat).Quo(ratOfInt(x), pow10(scale))
		c.litNums = append(c.litNums, r, new(big.Rat).Add(r, tiny), new(big.Rat).Sub(r, tiny))
	}
	for _, s := range []string{"1.005", "1e40", "-1e40", "1e-50", "0.5", "10.25"} {
		r, _ := new(big.Rat).SetString(s)
		c.litNums = append(c.litNums, r)
	}
	return c
}

func boolColumn(rng *rand.Rand, name string, n int) *tcol {
	c := &tcol{in: Input{Name: name, Kind: column.Bool}, null: randNulls(rng, n)}
	off := rng.IntN(20)
	buf := make([]byte, (off+n+7)/8)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	for i := range n {
		b := rng.IntN(2) == 0
		c.bools = append(c.bools, b)
		k := off + i
		if b {
			buf[k>>3] |= 1 << (k & 7)
		} else {
			buf[k>>3] &^= 1 << (k & 7)
		}
	}
	c.view = &column.View{Type: column.TypeName("bool"), Kind: column.Bool, Values: buf, Offset: off}
	withNulls(rng, c.view, c.null)
	return c
}

var strPool = []string{"", "a", "ab", "b", "EU", "US", "\x00", "\xff", "abc", "aa", "zz"}

// bytesView lays out strs as a view of kind (Binary, LargeBinary or, all of
// width w, FixedSizeBinary).
func bytesView(rng *rand.Rand, kind column.Kind, strs [][]byte, w int) *column.View {
	off := rng.IntN(5)
	v := &column.View{Type: column.TypeName(kind.String()), Kind: kind, Offset: off, Len: len(strs)}
	if kind == column.FixedSizeBinary {
		v.Width = w
		v.Values = make([]byte, off*w)
		for _, s := range strs {
			v.Values = append(v.Values, s...)
		}
		return v
	}
	data := []byte("junk")
	offs := make([]int64, off, off+len(strs)+1)
	for i := range offs {
		offs[i] = int64(rng.IntN(len(data) + 1))
	}
	for _, s := range strs {
		offs = append(offs, int64(len(data)))
		data = append(data, s...)
	}
	offs = append(offs, int64(len(data)))
	v.Values = append(data, "tail"...)
	if kind == column.LargeBinary {
		v.Offsets = fixedBuffer(rng, offs, 0)
	} else {
		v.Offsets = fixedBuffer(rng, convert[int32](offs), 0)
	}
	return v
}

func bytesColumn(rng *rand.Rand, name string, kind column.Kind, n int) *tcol {
	c := &tcol{in: Input{Name: name, Kind: kind}, null: randNulls(rng, n)}
	pool := strPool
	w := 0
	if kind == column.FixedSizeBinary {
		pool, w = []string{"aa", "ab", "b\x00", "zz", "\x00\x00", "EU"}, 2
	}
	for range n {
		c.strs = append(c.strs, []byte(pick(rng, pool)))
	}
	c.view = bytesView(rng, kind, c.strs, w)
	withNulls(rng, c.view, c.null)
	c.litStrs = append(append([]string{}, strPool...), "a\x00", "b\x00", "aaa", "\x00\x00", "zzz")
	return c
}

// dictColumn is a dictionary view whose values are those of a column d of
// the dictionary, with random indices (out of the dictionary at null
// rows, at times).
func dictColumn(rng *rand.Rand, name string, d *tcol, idxKind column.Kind, n int) *tcol {
	dn := d.view.Len
	c := &tcol{in: Input{Name: name, Kind: d.in.Kind, Scale: d.in.Scale}, null: randNulls(rng, n), litNums: d.litNums, litStrs: d.litStrs}
	idx := make([]int64, n)
	for i := range idx {
		if dn == 0 || c.null[i] && rng.IntN(4) == 0 {
			idx[i] = int64(dn + rng.IntN(3)) // garbage under a null
			if idxKind == column.Int8 {
				idx[i] = -1
			}
			c.null[i] = true
		} else {
			idx[i] = int64(rng.IntN(dn))
		}
	}
	nulls := append([]bool(nil), c.null...)
	for i, k := range idx {
		c.num = append(c.num, nil)
		c.strs = append(c.strs, nil)
		c.special = append(c.special, 0)
		if nulls[i] {
			continue
		}
		if d.null[k] {
			c.null[i] = true
			continue
		}
		if d.num != nil {
			c.num[i] = d.num[k]
			if d.special != nil {
				c.special[i] = d.special[k]
			}
		}
		if d.strs != nil {
			c.strs[i] = d.strs[k]
		}
	}
	off := rng.IntN(10)
	var buf []byte
	switch idxKind {
	case column.Int8:
		buf = fixedBuffer(rng, convert[int8](idx), off)
	case column.Uint16:
		buf = fixedBuffer(rng, convert[uint16](idx), off)
	default:
		buf = fixedBuffer(rng, convert[int32](idx), off)
	}
	c.view = &column.View{Type: column.TypeName("dictionary"), Kind: d.in.Kind, Values: buf, Offset: off, IndexKind: idxKind, Dict: d.view}
	withNulls(rng, c.view, nulls)
	return c
}

func opaqueColumn(rng *rand.Rand, name string, n int) *tcol {
	c := &tcol{in: Input{Name: name, Kind: column.Opaque}, null: randNulls(rng, n)}
	c.view = &column.View{Type: column.TypeName("list<int64>"), Kind: column.Opaque}
	withNulls(rng, c.view, c.null)
	return c
}

// table is a random table of every kind the binder accepts, n rows.
func table(rng *rand.Rand, n int) []*tcol {
	cols := []*tcol{
		intColumn[int8](rng, "i8", column.Int8, n),
		intColumn[int16](rng, "i16", column.Int16, n),
		intColumn[int32](rng, "i32", column.Int32, n),
		intColumn[int64](rng, "i64", column.Int64, n),
		intColumn[uint8](rng, "u8", column.Uint8, n),
		intColumn[uint16](rng, "u16", column.Uint16, n),
		intColumn[uint32](rng, "u32", column.Uint32, n),
		intColumn[uint64](rng, "u64", column.Uint64, n),
		floatColumn(rng, "f16", column.Float16, n),
		floatColumn(rng, "f32", column.Float32, n),
		floatColumn(rng, "f64", column.Float64, n),
		boolColumn(rng, "b", n),
		decimalColumn(rng, "d32", column.Decimal32, 3, n),
		decimalColumn(rng, "d64", column.Decimal64, 0, n),
		decimalColumn(rng, "d128", column.Decimal128, 2, n),
		bytesColumn(rng, "s", column.Binary, n),
		bytesColumn(rng, "ls", column.LargeBinary, n),
		bytesColumn(rng, "fsb", column.FixedSizeBinary, n),
		opaqueColumn(rng, "o", n),
	}
	dn := rng.IntN(12)
	cols = append(cols,
		dictColumn(rng, "di64", intColumn[int64](rng, "", column.Int64, dn), pick(rng, []column.Kind{column.Int8, column.Uint16, column.Int32}), n),
		dictColumn(rng, "ds", bytesColumn(rng, "", column.Binary, dn), pick(rng, []column.Kind{column.Int8, column.Uint16, column.Int32}), n),
		dictColumn(rng, "df64", floatColumn(rng, "", column.Float64, dn), column.Int32, n))
	return cols
}

func randLiteral(rng *rand.Rand, c *tcol) Literal {
	switch c.in.Kind.Family() {
	case column.FamilyBytes:
		return String(pick(rng, c.litStrs))
	case column.FamilyBool:
		return Bool(rng.IntN(2) == 0)
	}
	if rng.IntN(2) == 0 {
		// a value of the data: equalities hit
		if r := c.num[rng.IntN(len(c.num))]; r != nil {
			return Number(r)
		}
	}
	return Number(pick(rng, c.litNums))
}

func randLeaf(rng *rand.Rand, cols []*tcol) Expr {
	c := pick(rng, cols)
	kind := rng.IntN(10)
	if c.in.Kind == column.Opaque || len(c.num)+len(c.strs)+len(c.bools) == 0 {
		kind = 9
	}
	switch {
	case kind < 6:
		return Compare{Column: c.in.Name, Op: Op(1 + rng.IntN(6)), Value: randLiteral(rng, c)}
	case kind < 8:
		n := 1 + rng.IntN(4)
		if rng.IntN(3) == 0 {
			n = 9 + rng.IntN(6) // past smallSet: a map
		}
		in := In{Column: c.in.Name, Not: rng.IntN(2) == 0}
		for range n {
			in.Values = append(in.Values, randLiteral(rng, c))
		}
		return in
	}
	return IsNull{Column: c.in.Name, Not: rng.IntN(2) == 0}
}

func randExpr(rng *rand.Rand, cols []*tcol, depth int) Expr {
	if depth == 0 || rng.IntN(3) == 0 {
		return randLeaf(rng, cols)
	}
	switch rng.IntN(3) {
	case 0:
		return And{L: randExpr(rng, cols, depth-1), R: randExpr(rng, cols, depth-1)}
	case 1:
		return Or{L: randExpr(rng, cols, depth-1), R: randExpr(rng, cols, depth-1)}
	}
	return Not{X: randExpr(rng, cols, depth-1)}
}

func inputsViews(cols []*tcol) ([]Input, []*column.View, map[string]*tcol) {
	var in []Input
	var views []*column.View
	byName := map[string]*tcol{}
	for _, c := range cols {
		in = append(in, c.in)
		views = append(views, c.view)
		byName[c.in.Name] = c
	}
	return in, views, byName
}

// checkSelect runs p over rows [lo, hi) and compares every bit with the
// oracle's evaluation of e.
func checkSelect(t *testing.T, p *Program, s *Scratch, e Expr, views []*column.View, byName map[string]*tcol, lo, hi int, rng *rand.Rand) {
	n := hi - lo
	nw := (n + 63) / 64
	out := make([]uint64, nw+1)
	for i := range out {
		out[i] = rng.Uint64()
	}
	guard := out[nw]
	count, err := p.Select(s, views, lo, hi, out[:nw+rng.IntN(2)])
	require.NoError(t, err, "%s rows [%d, %d)", e, lo, hi)
	want := 0
	for r := lo; r < hi; r++ {
		o := oracle(e, byName, r)
		got := out[(r-lo)/64]>>((r-lo)%64)&1 == 1
		if o == tru {
			want++
		}
		if got != (o == tru) {
			require.Failf(t, "wrong row", "%s: row %d: selected %t, the oracle says %d", e, r, got, o)
		}
	}
	assert.Equal(t, want, count, "%s rows [%d, %d)", e, lo, hi)
	if n%64 != 0 {
		assert.Zero(t, out[nw-1]>>(n%64), "bits past the range are cleared")
	}
	assert.Equal(t, guard, out[nw], "the word past the range is untouched")
}

func TestSelectOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var s Scratch
	exprs, selected := 0, 0
	for range 40 {
		n := []int{0, 1, 63, 64, 65, 200, 700}[rng.IntN(7)]
		cols := table(rng, n)
		in, views, byName := inputsViews(cols)
		for range 30 {
			e := randExpr(rng, cols, 3)
			// through the canonical form: the printed literals are read back exactly
			parsed, err := Parse(e.String())
			require.NoError(t, err, e.String())
			require.Equal(t, e.String(), parsed.String())
			p, err := Bind(parsed, in)
			require.NoError(t, err, e.String())
			exprs++
			for range 3 {
				lo := rng.IntN(n + 1)
				hi := lo + rng.IntN(n-lo+1)
				sc := &s
				if rng.IntN(10) == 0 {
					sc = nil
				}
				checkSelect(t, p, sc, parsed, views, byName, lo, hi, rng)
				for r := lo; r < hi; r++ {
					if oracle(parsed, byName, r) == tru {
						selected++
					}
				}
			}
		}
	}
	t.Logf("%d expressions, %d rows selected", exprs, selected)
	require.Greater(t, selected, 5000)
}

// edge is a table of one column, checked against the oracle and against
// counts known by hand.
func TestSelectEdges(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	i8 := &tcol{in: Input{Name: "x", Kind: column.Int8}}
	vals := []int8{-128, -1, 0, 1, 127, 5}
	i8.null = []bool{false, false, false, false, false, true}
	for _, v := range vals {
		i8.num = append(i8.num, big.NewRat(int64(v), 1))
	}
	i8.view = &column.View{Kind: column.Int8, Values: fixedBuffer(rng, vals, 3), Offset: 3}
	withNulls(rng, i8.view, i8.null)

	f := &tcol{in: Input{Name: "f", Kind: column.Float64}}
	fv := []float64{math.NaN(), math.Copysign(0, -1), 0, math.Inf(-1), 0.1, 1}
	f.null = make([]bool, len(fv))
	for _, x := range fv {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			f.num, f.special = append(f.num, nil), append(f.special, x)
		} else {
			f.num, f.special = append(f.num, new(big.Rat).SetFloat64(x)), append(f.special, 0)
		}
	}
	f.view = &column.View{Kind: column.Float64, Values: fixedBuffer(rng, fv, 0), Len: len(fv)}

	d := &tcol{in: Input{Name: "d", Kind: column.Decimal128, Scale: 2}}
	dv := []int64{100, 101, 99, -100, 1005}
	d.null = make([]bool, len(dv))
	w := make([]uint64, 0, 2*len(dv))
	for _, x := range dv {
		d.num = append(d.num, big.NewRat(x, 100))
		ws := words128(big.NewInt(x))
		w = append(w, ws[0], ws[1])
	}
	d.view = &column.View{Kind: column.Decimal128, Values: fixedBuffer(rng, w, 0), Len: len(dv)}
	d.null = append(d.null, true)
	d.num = append(d.num, nil)
	d.view.Values = append(d.view.Values, make([]byte, 16)...)
	d.view.Len++
	withNulls(rng, d.view, d.null)

	g := &tcol{in: Input{Name: "g", Kind: column.Float32}}
	gv := []float32{float32(math.Inf(1)), 0, 7, float32(math.NaN()), 0.5, math.MaxFloat32}
	g.null = make([]bool, len(gv))
	for _, x := range gv {
		if x != x || math.IsInf(float64(x), 0) {
			g.num, g.special = append(g.num, nil), append(g.special, float64(x))
		} else {
			g.num, g.special = append(g.num, new(big.Rat).SetFloat64(float64(x))), append(g.special, 0)
		}
	}
	g.view = &column.View{Kind: column.Float32, Values: fixedBuffer(rng, gv, 1), Offset: 1, Len: len(gv)}

	cols := []*tcol{i8, f, d, g}
	in, views, byName := inputsViews(cols)
	for _, c := range []struct {
		src  string
		want int
	}{
		{"x < 1000", 5}, {"x >= -1000", 5}, {"x != 1000", 5}, {"x = 1000", 0}, {"x > 127.5", 0}, {"x <= -128.5", 0},
		{"x > 126.5", 1}, {"x < -127.9", 1}, {"x = 0.5", 0}, {"x != 0.5", 5}, {"not x < 1000", 0}, {"not x = 1000", 5},
		{"x in (1000, -129, 1)", 1}, {"x not in (1000, 0.5)", 5}, {"x is null", 1}, {"not (x < 1000 or x is null)", 0},
		{"x < 1000 or x is null", 6}, {"x < 1000 and x is null", 0}, {"not (x > 0 and x is null)", 5},
		{"f = 0", 2}, {"f = -0", 2}, {"f < 0", 1}, {"f <= 0", 3}, {"f != 0", 4}, {"not f = 0", 4}, {"f = 0.1", 0},
		{"f > 0.1", 2}, {"f < 0.1", 3}, {"f >= 1e400", 0}, {"f > -1e400", 4}, {"f != 1e400", 6}, {"not f < 1", 2},
		{"f in (0, 1)", 3}, {"f not in (0, 1)", 3}, {"f < 1e-400", 3}, {"f > -1e-400", 4},
		{"d = 1", 1}, {"d = 1.005", 0}, {"d != 1.005", 5}, {"d < 1.005", 3}, {"d <= 1.00", 3}, {"d > 1.005", 2},
		{"g in (1e300, 5e-324, 8)", 0}, {"g in (1e300, 5e-324, 7)", 1}, {"g = 1e300", 0}, {"g = 5e-324", 0},
		{"g > 3.4028234663852886e38", 1}, {"g >= 3.4028234663852886e38", 1}, {"g >= 3.40282346638528859811704183484516925440e38", 2}, {"g not in (1e300, 0)", 5},
		{"g < 1e-300", 1}, {"g <= 0", 1},
		// float64 values that are no float32: never equal to one, though they round to one
		{"g in (0.500000000931322574615478515625, 8)", 0}, {"g = 0.500000000931322574615478515625", 0},
		{"g in (340282366920938463463374607431768211456, 8)", 0}, {"g in (0.5, 340282366920938463463374607431768211456)", 1},
		{"d >= 1.01", 2}, {"d = 10.05", 1}, {"d in (1.01, 0.99, 1.005)", 2}, {"d < -1e40", 0}, {"d > -1e40", 5},
	} {
		e, err := Parse(c.src)
		require.NoError(t, err)
		p, err := Bind(e, in)
		require.NoError(t, err, c.src)
		out := make([]uint64, 1)
		got, err := p.Select(nil, views, 0, 6, out)
		require.NoError(t, err)
		assert.Equal(t, c.want, got, c.src)
		checkSelect(t, p, new(Scratch), e, views, byName, 0, 6, rng)
	}
}

func TestBindErrors(t *testing.T) {
	in := []Input{{Name: "price", Kind: column.Int64}, {Name: "name", Kind: column.Binary}, {Name: "ok", Kind: column.Bool},
		{Name: "l", Kind: column.Opaque}, {Name: "u", Kind: column.Unsupported}, {Name: "d", Kind: column.Decimal128, Scale: 2}}
	for _, c := range []struct{ src, msg string }{
		{`price = "x"`, `where: column "price" (int64) compared with a string`},
		{`price in (1, true)`, `where: column "price" (int64) compared with a boolean`},
		{`name < 3`, `where: column "name" (binary) compared with a number`},
		{`ok = 1`, `where: column "ok" (bool) compared with a number`},
		{`d = 'x'`, `where: column "d" (decimal128) compared with a string`},
		{`l = 1`, `where: column "l" (opaque) compared with a number: its values are not comparable, only IS NULL applies`},
		{`u > 'a'`, `where: column "u" (unsupported) compared with a string: its values are not comparable, only IS NULL applies`},
		{`nope is null`, `where: unknown column "nope"`},
		{`price > 1 and not (zip = 3)`, `where: unknown column "zip"`},
	} {
		e, err := Parse(c.src)
		require.NoError(t, err)
		_, err = Bind(e, in)
		assert.EqualError(t, err, c.msg, c.src)
	}
	for _, src := range []string{`l is null`, `u is not null`, `ok = true`, `d > 1.005`, `name >= "a"`} {
		e, err := Parse(src)
		require.NoError(t, err)
		_, err = Bind(e, in)
		assert.NoError(t, err, src)
	}
	_, err := Bind(IsNull{Column: "x"}, []Input{{Name: "x", Kind: column.Int8}, {Name: "x", Kind: column.Int8}})
	assert.EqualError(t, err, `where: column "x" is given twice`)
	_, err = Bind(In{Column: "price"}, in)
	assert.EqualError(t, err, `where: column "price": IN of an empty list`)
	_, err = Bind(nil, in)
	assert.Error(t, err)
}

func TestSelectBadViews(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	c := intColumn[int32](rng, "x", column.Int32, 100)
	s := bytesColumn(rng, "s", column.Binary, 100)
	e, err := Parse(`x > 1 and s = "a"`)
	require.NoError(t, err)
	p, err := Bind(e, []Input{c.in, s.in, {Name: "unused", Kind: column.Int8}})
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1}, p.Uses())
	out := make([]uint64, 2)
	views := []*column.View{c.view, s.view, nil}
	_, err = p.Select(nil, views, 0, 100, out)
	require.NoError(t, err, "a view the program does not read may be nil")
	_, err = p.Select(nil, views[:2], 0, 100, out)
	assert.EqualError(t, err, "where: 2 views for the 3 inputs of the predicate")
	_, err = p.Select(nil, views, 0, 101, out)
	assert.EqualError(t, err, `where: rows up to 101 of column "x", whose view has 100`)
	_, err = p.Select(nil, views, 0, 100, out[:1])
	assert.EqualError(t, err, "where: a selection of 1 words for 100 rows")
	_, err = p.Select(nil, views, 5, 4, out)
	assert.EqualError(t, err, "where: invalid row range [5, 4)")
	_, err = p.Select(nil, []*column.View{s.view, s.view, nil}, 0, 10, out)
	assert.EqualError(t, err, `where: the view of column "x" is binary, not int32`)
	short := *c.view
	short.Values = short.Values[:8]
	_, err = p.Select(nil, []*column.View{&short, s.view, nil}, 0, 10, out)
	assert.ErrorContains(t, err, `where: column "x": values buffer of 8 bytes is too short`)

	// a binary view whose offsets go backwards in the middle
	bad := *s.view
	offs := append([]byte(nil), bad.Offsets...)
	column.Slice[int32](offs)[bad.Offset+50] = 1 << 30
	bad.Offsets = offs
	_, err = p.Select(nil, []*column.View{c.view, &bad, nil}, 0, 100, out)
	assert.ErrorContains(t, err, "where: binary offsets")

	// a dictionary index out of its dictionary on a valid row
	d := intColumn[int64](rng, "", column.Int64, 3)
	idx := []int32{0, 1, 7, 2}
	dv := &column.View{Kind: column.Int64, Values: fixedBuffer(rng, idx, 0), Len: 4, IndexKind: column.Int32, Dict: d.view}
	pd, err := Bind(Compare{Column: "k", Op: Gt, Value: Int(0)}, []Input{{Name: "k", Kind: column.Int64}})
	require.NoError(t, err)
	_, err = pd.Select(nil, []*column.View{dv}, 0, 4, out)
	assert.EqualError(t, err, "where: dictionary index of row 2 out of its dictionary of 3 values")
	dv.Validity, dv.NullCount = []byte{0b1011}, 1
	_, err = pd.Select(nil, []*column.View{dv}, 0, 4, out)
	assert.NoError(t, err, "an index under a null is not read")
}

func TestSelectConcurrentNoAlloc(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 1 << 14
	cols := table(rng, n)
	in, views, byName := inputsViews(cols)
	srcs := []string{
		`i64 > 10 and (s in ("EU", "US", "a", "b", "ab", "abc", "zz", "aa", "x") or ds = "EU")`,
		`not (f64 < 0.5 or d128 != 1.00) or di64 in (1, 2, 3) or fsb >= "b"`,
		`u8 in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10) and f32 is not null and b = true and o is null`,
	}
	var progs []*Program
	var exprs []Expr
	for _, src := range srcs {
		e, err := Parse(src)
		require.NoError(t, err)
		p, err := Bind(e, in)
		require.NoError(t, err)
		progs, exprs = append(progs, p), append(exprs, e)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			var s Scratch
			for k := range 6 {
				lo := (g*6 + k) * 600
				checkSelect(t, progs[k%len(progs)], &s, exprs[k%len(progs)], views, byName, lo, lo+600, rng)
			}
		}()
	}
	wg.Wait()

	var s Scratch
	out := make([]uint64, n/64)
	for _, p := range progs {
		_, err := p.Select(&s, views, 0, n, out)
		require.NoError(t, err)
		allocs := testing.AllocsPerRun(5, func() {
			_, err = p.Select(&s, views, 0, n, out)
		})
		require.NoError(t, err)
		assert.Zero(t, allocs, p.String())
	}
}

func BenchmarkSelect(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 1 << 16
	cols := table(rng, n)
	in, views, _ := inputsViews(cols)
	for _, src := range []string{`i64 > 10`, `i8 < 1000`, `f64 < 0.5 and i32 >= 0`, `d128 > 1.005`, `s = "EU"`, `u16 in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)`,
		`di64 in (1, 2, 3) or ds = "EU"`, `not (i64 > 10 and f32 is null)`} {
		e, err := Parse(src)
		if err != nil {
			b.Fatal(err)
		}
		p, err := Bind(e, in)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(src, func(b *testing.B) {
			var s Scratch
			out := make([]uint64, n/64)
			b.SetBytes(n)
			for b.Loop() {
				if _, err := p.Select(&s, views, 0, n, out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
