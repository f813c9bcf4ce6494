package filter

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"

	"github.com/arrowagg/arrowagg/column"
)

// Input is a column that a Program reads: its name in expressions, its
// storage kind, and for the decimal kinds its scale (a value v of the column
// is v / 10^Scale).
type Input struct {
	Name  string
	Kind  column.Kind
	Scale int32
}

// Program is an expression bound to the kinds of its inputs: what Select
// evaluates and MayMatch prunes with. It is immutable once made, so one
// Program serves any number of goroutines at once (each with its own
// Scratch).
type Program struct {
	in    []Input
	root  *node
	depth int   // the tree's height: the scratch bitmaps Select needs
	used  []int // the inputs the program reads, ascending
	expr  string
}

// Inputs are the program's inputs, as given to Bind.
func (p *Program) Inputs() []Input { return slices.Clone(p.in) }

// Uses is the indices of the inputs that the program reads, ascending:
// Select reads the views of these alone (the others may be nil).
func (p *Program) Uses() []int { return slices.Clone(p.used) }

// String is the canonical form of the expression the program was bound from.
func (p *Program) String() string { return p.expr }

type nodeKind uint8

const (
	nLeaf nodeKind = iota
	nAnd
	nOr
)

// node is a node of a bound expression, NOTs pushed down to the leaves, AND
// and OR chains flattened.
type node struct {
	kind nodeKind
	kids []*node
	leaf *leaf
}

type leafOp uint8

const (
	lConst leafOp = iota // cval for every valid row (a comparison whose outcome the domain decides)
	lNull                // IS NULL (neg: IS NOT NULL): never unknown
	lRange               // lo <= x <= hi in the column's domain
	lSet                 // x in the set
	lBytes               // bytewise comparison with lit: mask of the outcomes that are TRUE
)

// leaf is a test of one column. Except lNull, it is UNKNOWN for null rows
// and otherwise its outcome XOR neg (after lConst's cval).
type leaf struct {
	col  int
	kind column.Kind
	op   leafOp
	neg  bool
	cval bool

	// lRange bounds in the family's domain: signed kinds and decimal32/64
	// (the unscaled value) in ilo..ihi, unsigned kinds and bool (0, 1) in
	// ulo..uhi, floats in flo..fhi (float64: every float kind's values are
	// float64 values), decimal128 in dlo..dhi ({lo, hi} words).
	ilo, ihi int64
	ulo, uhi uint64
	flo, fhi float64
	dlo, dhi [2]uint64

	// lSet: the set's values in the domain, sorted, distinct, and typed
	// for the column's Go type (*typedSet[T], or *typedSet[string]).
	iset []int64
	uset []uint64
	fset []float64
	dset [][2]uint64
	sset []string
	tset any

	// lBytes: the literal and the outcomes of bytes.Compare(x, lit) that
	// are TRUE, bit c+1 for outcome c.
	lit  []byte
	mask uint8
}

// Bind resolves e against in: each column it reads to its index in in, each
// literal converted exactly to the column's domain (see the package doc).
// Numbers compare with the integer, float and decimal kinds (an integer
// column compared with 1000.5 or with a number out of its range gives the
// exact answer, and so does a decimal column compared with a number of more
// places than its scale), strings with the binary kinds (bytewise),
// booleans with bool columns (false < true); IS NULL applies to every kind,
// Opaque included. Other pairs, unknown columns
// and columns listed twice in in are errors naming the column.
func Bind(e Expr, in []Input) (*Program, error) {
	if e == nil {
		return nil, errors.New("where: no predicate")
	}
	idx := make(map[string]int, len(in))
	for i, c := range in {
		if _, dup := idx[c.Name]; dup {
			return nil, fmt.Errorf("where: column %q is given twice", c.Name)
		}
		idx[c.Name] = i
	}
	b := &binder{in: in, idx: idx, used: map[int]bool{}}
	root, err := b.compile(e, false)
	if err != nil {
		return nil, err
	}
	p := &Program{in: slices.Clone(in), root: root, depth: height(root), expr: e.String()}
	for i := range in {
		if b.used[i] {
			p.used = append(p.used, i)
		}
	}
	return p, nil
}

func height(n *node) int {
	h := 0
	for _, k := range n.kids {
		h = max(h, height(k))
	}
	return h + 1
}

type binder struct {
	in   []Input
	idx  map[string]int
	used map[int]bool
}

// compile binds e, negated when neg (NOT pushed down: De Morgan's laws hold
// in three-valued logic, and a leaf keeps its negation, since NOT (x < 1)
// is not x >= 1 for NaN).
func (b *binder) compile(e Expr, neg bool) (*node, error) {
	switch e := deref(e).(type) {
	case And, Or:
		var l, r Expr
		kind := nAnd
		if a, ok := e.(And); ok {
			l, r = a.L, a.R
		} else {
			o := e.(Or)
			l, r, kind = o.L, o.R, nOr
		}
		if neg {
			kind = nAnd + nOr - kind
		}
		ln, err := b.compile(l, neg)
		if err != nil {
			return nil, err
		}
		rn, err := b.compile(r, neg)
		if err != nil {
			return nil, err
		}
		n := &node{kind: kind}
		for _, k := range []*node{ln, rn} {
			if k.kind == kind {
				n.kids = append(n.kids, k.kids...)
			} else {
				n.kids = append(n.kids, k)
			}
		}
		return n, nil
	case Not:
		return b.compile(e.X, !neg)
	case IsNull:
		col, _, err := b.column(e.Column)
		if err != nil {
			return nil, err
		}
		return &node{leaf: &leaf{col: col, kind: b.in[col].Kind, op: lNull, neg: e.Not != neg}}, nil
	case Compare:
		if e.Op < Eq || e.Op > Ge {
			return nil, fmt.Errorf("where: invalid comparison operator %d", e.Op)
		}
		col, c, err := b.column(e.Column)
		if err != nil {
			return nil, err
		}
		l := &leaf{col: col, kind: c.Kind}
		if err := b.compare(l, c, e.Op, e.Value); err != nil {
			return nil, err
		}
		if neg {
			l.neg = !l.neg
		}
		return &node{leaf: l}, nil
	case In:
		if len(e.Values) == 0 {
			return nil, fmt.Errorf("where: column %q: IN of an empty list", e.Column)
		}
		col, c, err := b.column(e.Column)
		if err != nil {
			return nil, err
		}
		l := &leaf{col: col, kind: c.Kind}
		if err := b.bindIn(l, c, e.Values); err != nil {
			return nil, err
		}
		if e.Not != neg {
			l.neg = !l.neg
		}
		return &node{leaf: l}, nil
	case nil:
		return nil, errors.New("where: nil expression")
	}
	return nil, fmt.Errorf("where: unknown expression node %T", e)
}

func (b *binder) column(name string) (int, Input, error) {
	i, ok := b.idx[name]
	if !ok {
		return 0, Input{}, fmt.Errorf("where: unknown column %q", name)
	}
	b.used[i] = true
	return i, b.in[i], nil
}

func mismatch(c Input, v Literal) error {
	switch c.Kind.Family() {
	case column.FamilyCounts, column.FamilyNone:
		return fmt.Errorf("where: column %q (%s) compared with %s: its values are not comparable, only IS NULL applies", c.Name, c.Kind, v.kindName())
	}
	return fmt.Errorf("where: column %q (%s) compared with %s", c.Name, c.Kind, v.kindName())
}

// domain is the integer domain of a column, for the kinds whose values are
// integers (the unscaled value of a decimal; 0 and 1 for bool).
func domain(k column.Kind) (lo, hi *big.Int, ok bool) {
	s := func(bits uint) (*big.Int, *big.Int, bool) {
		h := new(big.Int).Lsh(big.NewInt(1), bits-1)
		return new(big.Int).Neg(h), h.Sub(h, big.NewInt(1)), true
	}
	u := func(bits uint) (*big.Int, *big.Int, bool) {
		h := new(big.Int).Lsh(big.NewInt(1), bits)
		return big.NewInt(0), h.Sub(h, big.NewInt(1)), true
	}
	switch k {
	case column.Int8:
		return s(8)
	case column.Int16:
		return s(16)
	case column.Int32, column.Decimal32:
		return s(32)
	case column.Int64, column.Decimal64:
		return s(64)
	case column.Decimal128:
		return s(128)
	case column.Uint8:
		return u(8)
	case column.Uint16:
		return u(16)
	case column.Uint32:
		return u(32)
	case column.Uint64:
		return u(64)
	case column.Bool:
		return u(1)
	}
	return nil, nil, false
}

// value is literal v in the units of column c's domain (a decimal's scaled
// by 10^Scale, a bool's 0 or 1), checked against the column's kind.
func value(c Input, v Literal) (*big.Rat, error) {
	switch c.Kind.Family() {
	case column.FamilySigned, column.FamilyUnsigned, column.FamilyFloat, column.FamilyDecimal:
		if v.Kind != NumberLit {
			return nil, mismatch(c, v)
		}
		if v.Num == nil {
			return nil, fmt.Errorf("where: column %q compared with a number literal without a value", c.Name)
		}
		if c.Kind.Family() != column.FamilyDecimal || c.Scale == 0 {
			return v.Num, nil
		}
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(int(c.Scale)))), nil)
		r := new(big.Rat).SetInt(p)
		if c.Scale > 0 {
			return new(big.Rat).Mul(r, v.Num), nil
		}
		return new(big.Rat).Quo(v.Num, r), nil
	case column.FamilyBool:
		if v.Kind != BoolLit {
			return nil, mismatch(c, v)
		}
		if v.Bool {
			return big.NewRat(1, 1), nil
		}
		return new(big.Rat), nil
	}
	return nil, mismatch(c, v)
}

func floor(r *big.Rat) *big.Int {
	// Euclidean division: the floor, the denominator being positive
	q, _ := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	return q
}

func ceil(r *big.Rat) *big.Int {
	q := floor(r)
	if !r.IsInt() {
		q.Add(q, big.NewInt(1))
	}
	return q
}

// compare binds `col op v` into l.
func (b *binder) compare(l *leaf, c Input, op Op, v Literal) error {
	if c.Kind.Family() == column.FamilyBytes {
		if v.Kind != StringLit {
			return mismatch(c, v)
		}
		l.op, l.lit = lBytes, []byte(v.Str)
		l.mask = [...]uint8{Eq: 2, Ne: 5, Lt: 1, Le: 3, Gt: 4, Ge: 6}[op]
		return nil
	}
	m, err := value(c, v)
	if err != nil {
		return err
	}
	if c.Kind.Family() == column.FamilyFloat {
		floatRange(l, op, m)
		return nil
	}
	dlo, dhi, _ := domain(c.Kind)
	if op == Ne {
		op, l.neg = Eq, true
	}
	var lo, hi *big.Int
	switch op {
	case Eq:
		if !m.IsInt() {
			l.op, l.cval = lConst, false
			return nil
		}
		lo, hi = new(big.Int).Set(m.Num()), new(big.Int).Set(m.Num())
	case Lt:
		lo, hi = dlo, ceil(m)
		hi.Sub(hi, big.NewInt(1))
	case Le:
		lo, hi = dlo, floor(m)
	case Gt:
		lo, hi = floor(m), dhi
		lo.Add(lo, big.NewInt(1))
	case Ge:
		lo, hi = ceil(m), dhi
	}
	setIntRange(l, lo, hi, dlo, dhi)
	return nil
}

// setIntRange makes l the test lo <= x <= hi of an integer domain [dlo,
// dhi]: a constant when the range is empty or the whole domain.
func setIntRange(l *leaf, lo, hi, dlo, dhi *big.Int) {
	if lo.Cmp(dlo) < 0 {
		lo = dlo
	}
	if hi.Cmp(dhi) > 0 {
		hi = dhi
	}
	switch {
	case lo.Cmp(hi) > 0:
		l.op, l.cval = lConst, false
	case lo.Cmp(dlo) == 0 && hi.Cmp(dhi) == 0:
		l.op, l.cval = lConst, true
	default:
		l.op = lRange
		switch l.kind.Family() {
		case column.FamilySigned:
			l.ilo, l.ihi = lo.Int64(), hi.Int64()
		case column.FamilyUnsigned, column.FamilyBool:
			l.ulo, l.uhi = lo.Uint64(), hi.Uint64()
		case column.FamilyDecimal:
			if l.kind == column.Decimal128 {
				l.dlo, l.dhi = words128(lo), words128(hi)
			} else {
				l.ilo, l.ihi = lo.Int64(), hi.Int64()
			}
		}
	}
}

// words128 is x (in the int128 range) as two's complement {lo, hi} words.
func words128(x *big.Int) [2]uint64 {
	m := new(big.Int).Lsh(big.NewInt(1), 128)
	u := new(big.Int).Mod(x, m) // Euclidean: non-negative
	lo := new(big.Int).And(u, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
	return [2]uint64{lo, new(big.Int).Rsh(u, 64).Uint64()}
}

// floatBelowAbove are the largest float64 below m and the smallest above
// it, for an m that no float64 equals (±Inf are float64 values: they bound
// every finite m).
func floatBelowAbove(m *big.Rat) (below, above float64) {
	f, _ := m.Float64()
	switch {
	case math.IsInf(f, 1):
		return math.MaxFloat64, f
	case math.IsInf(f, -1):
		return f, -math.MaxFloat64
	}
	fr := new(big.Rat)
	fr.SetFloat64(f)
	if fr.Cmp(m) < 0 {
		return f, math.Nextafter(f, math.Inf(1))
	}
	return math.Nextafter(f, math.Inf(-1)), f
}

// floatRange binds `x op m` for a float column: as the range of float64
// values (±Inf included) that satisfy it, which NaN never is in.
func floatRange(l *leaf, op Op, m *big.Rat) {
	if op == Ne {
		op, l.neg = Eq, true
	}
	inf := math.Inf(1)
	f, exact := m.Float64()
	if exact && !math.IsInf(f, 0) {
		l.op = lRange
		switch op {
		case Eq:
			l.flo, l.fhi = f, f
		case Lt:
			l.flo, l.fhi = -inf, math.Nextafter(f, -inf)
		case Le:
			l.flo, l.fhi = -inf, f
		case Gt:
			l.flo, l.fhi = math.Nextafter(f, inf), inf
		case Ge:
			l.flo, l.fhi = f, inf
		}
		return
	}
	below, above := floatBelowAbove(m)
	l.op = lRange
	switch op {
	case Eq:
		l.op, l.cval = lConst, false
	case Lt, Le:
		l.flo, l.fhi = -inf, below
	case Gt, Ge:
		l.flo, l.fhi = above, inf
	}
}

// bindIn binds `col in (vals)` into l: the values that the domain holds (others
// never equal a value of the column), as a constant, a range of one value
// or a set.
func (b *binder) bindIn(l *leaf, c Input, vals []Literal) error {
	fam := c.Kind.Family()
	if fam == column.FamilyBytes {
		for _, v := range vals {
			if v.Kind != StringLit {
				return mismatch(c, v)
			}
			l.sset = append(l.sset, v.Str)
		}
		slices.Sort(l.sset)
		l.sset = slices.Compact(l.sset)
		if len(l.sset) == 1 {
			l.op, l.lit, l.mask = lBytes, []byte(l.sset[0]), 2
			l.sset = nil
			return nil
		}
		l.op, l.tset = lSet, newTypedSet(l.sset)
		return nil
	}
	var ints []*big.Int
	var floats []float64
	dlo, dhi, _ := domain(c.Kind)
	for _, v := range vals {
		m, err := value(c, v)
		if err != nil {
			return err
		}
		if fam == column.FamilyFloat {
			if f, exact := m.Float64(); exact && !math.IsInf(f, 0) {
				floats = append(floats, f)
			}
			continue
		}
		if m.IsInt() && m.Num().Cmp(dlo) >= 0 && m.Num().Cmp(dhi) <= 0 {
			ints = append(ints, new(big.Int).Set(m.Num()))
		}
	}
	if fam == column.FamilyFloat {
		slices.Sort(floats)
		floats = slices.Compact(floats)
		if c.Kind == column.Float32 {
			// a float32 column holds only the values that are float32s
			floats = slices.DeleteFunc(floats, func(f float64) bool { return float64(float32(f)) != f })
		}
		switch len(floats) {
		case 0:
			l.op, l.cval = lConst, false
		case 1:
			l.op, l.flo, l.fhi = lRange, floats[0], floats[0]
		default:
			l.op, l.fset = lSet, floats
			switch c.Kind {
			case column.Float32:
				l.tset = newOrderedSet(convert[float32](floats))
			default:
				l.tset = newOrderedSet(floats)
			}
		}
		return nil
	}
	slices.SortFunc(ints, func(a, b *big.Int) int { return a.Cmp(b) })
	ints = slices.CompactFunc(ints, func(a, b *big.Int) bool { return a.Cmp(b) == 0 })
	switch {
	case len(ints) == 0:
		l.op, l.cval = lConst, false
		return nil
	case len(ints) == 1 || fam == column.FamilyBool:
		// bool: {0}, {1} or {0, 1}, a range
		setIntRange(l, ints[0], ints[len(ints)-1], dlo, dhi)
		return nil
	}
	l.op = lSet
	switch fam {
	case column.FamilySigned, column.FamilyDecimal:
		if c.Kind == column.Decimal128 {
			for _, x := range ints {
				l.dset = append(l.dset, words128(x))
			}
			l.tset = newTypedSet(l.dset)
			break
		}
		for _, x := range ints {
			l.iset = append(l.iset, x.Int64())
		}
		switch c.Kind {
		case column.Int8:
			l.tset = newOrderedSet(convert[int8](l.iset))
		case column.Int16:
			l.tset = newOrderedSet(convert[int16](l.iset))
		case column.Int32, column.Decimal32:
			l.tset = newOrderedSet(convert[int32](l.iset))
		default:
			l.tset = newOrderedSet(l.iset)
		}
	case column.FamilyUnsigned:
		for _, x := range ints {
			l.uset = append(l.uset, x.Uint64())
		}
		switch c.Kind {
		case column.Uint8:
			l.tset = newOrderedSet(convert[uint8](l.uset))
		case column.Uint16:
			l.tset = newOrderedSet(convert[uint16](l.uset))
		case column.Uint32:
			l.tset = newOrderedSet(convert[uint32](l.uset))
		default:
			l.tset = newOrderedSet(l.uset)
		}
	}
	return nil
}

func convert[T, F column.Number](s []F) []T {
	out := make([]T, len(s))
	for i, v := range s {
		out[i] = T(v)
	}
	return out
}

// smallSet is the size up to which a set is searched linearly.
const smallSet = 8

// typedSet is the values of an IN list in the column's Go type, sorted
// and distinct where the type is ordered: searched linearly when small;
// else, for 8- and 16-bit integers, a bitmap of the type's values (table,
// indexed by the value's bits), for the other ordered types a binary
// search, for the rest (decimal128, strings) a map.
type typedSet[T comparable] struct {
	vals  []T
	table []uint64
	m     map[T]struct{}
}

func newTypedSet[T comparable](vals []T) *typedSet[T] {
	s := &typedSet[T]{vals: vals}
	if len(vals) > smallSet {
		s.m = make(map[T]struct{}, len(vals))
		for _, v := range vals {
			s.m[v] = struct{}{}
		}
	}
	return s
}

// newOrderedSet is the set of vals, sorted and distinct.
func newOrderedSet[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64](vals []T) *typedSet[T] {
	s := &typedSet[T]{vals: vals}
	var zero T
	if w := binary.Size(zero); len(vals) > smallSet && w <= 2 {
		s.table = make([]uint64, (1<<(8*w))/64)
		for _, v := range vals {
			k := tableIndex(v, w)
			s.table[k>>6] |= 1 << (k & 63)
		}
	}
	return s
}

// tableIndex is the bits of an integer of w bytes, as an index of a table
// of its 2^(8w) values.
func tableIndex[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64](v T, w int) uint64 {
	return uint64(v) & (1<<(8*w) - 1)
}
