package filter

import (
	"math/big"
	"strconv"
	"strings"
)

// Expr is a predicate: a node of the syntax tree that Parse makes (or a
// program builds): Compare, In, IsNull, And, Or or Not, as values (Parse's)
// or pointers. String prints it in the canonical form, which Parse reads
// back to an equal tree.
type Expr interface {
	String() string
	// prec is the node's precedence in the canonical form: 1 or, 2 and,
	// 3 not, 4 the rest.
	prec() int
}

// Op is a comparison operator.
type Op uint8

// The comparison operators. Parse reads `==` as Eq and `<>` as Ne.
const (
	Eq Op = iota + 1 // =
	Ne               // !=
	Lt               // <
	Le               // <=
	Gt               // >
	Ge               // >=
)

var opNames = [...]string{Eq: "=", Ne: "!=", Lt: "<", Le: "<=", Gt: ">", Ge: ">="}

// String is the operator's canonical spelling ("=", "!=", "<", ...).
func (o Op) String() string {
	if o >= Eq && o <= Ge {
		return opNames[o]
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// LiteralKind says which field of a Literal holds its value.
type LiteralKind uint8

// The kinds of literals.
const (
	NumberLit LiteralKind = iota + 1 // Num
	StringLit                        // Str
	BoolLit                          // Bool
)

// Literal is a constant of an expression. A number is held exactly, whatever
// its spelling (10, -3, 10.25, 1e-3): a comparison with a column is decided
// on the exact value, never on a rounded one. There is no null literal: a
// comparison with null is never TRUE (IS NULL tests for nulls).
type Literal struct {
	Kind LiteralKind
	Num  *big.Rat // NumberLit: the exact value, never written after construction
	Str  string   // StringLit: the bytes (any, not necessarily UTF-8)
	Bool bool     // BoolLit
}

// Int is the number literal n.
func Int(n int64) Literal { return Literal{Kind: NumberLit, Num: new(big.Rat).SetInt64(n)} }

// Uint is the number literal n.
func Uint(n uint64) Literal {
	return Literal{Kind: NumberLit, Num: new(big.Rat).SetInt(new(big.Int).SetUint64(n))}
}

// Number is the number literal r (copied).
func Number(r *big.Rat) Literal { return Literal{Kind: NumberLit, Num: new(big.Rat).Set(r)} }

// String is the string literal s.
func String(s string) Literal { return Literal{Kind: StringLit, Str: s} }

// Bool is the boolean literal b.
func Bool(b bool) Literal { return Literal{Kind: BoolLit, Bool: b} }

// String is the literal's canonical form: a number as an exact decimal
// (integers without a point, others with the fewest digits that are
// exact), a string double-quoted with Go's escapes, true or false.
func (l Literal) String() string {
	switch l.Kind {
	case NumberLit:
		if l.Num == nil {
			return "0"
		}
		return formatRat(l.Num)
	case StringLit:
		return strconv.Quote(l.Str)
	case BoolLit:
		return strconv.FormatBool(l.Bool)
	}
	return "?"
}

// kindName is the literal's kind for messages ("a number").
func (l Literal) kindName() string {
	switch l.Kind {
	case NumberLit:
		return "a number"
	case StringLit:
		return "a string"
	case BoolLit:
		return "a boolean"
	}
	return "an invalid literal"
}

// formatRat prints r, whose denominator has no prime factor but 2 and 5 (as
// every number that Parse reads), as an exact decimal with the fewest
// places; other rationals are printed to 40 places, rounded.
func formatRat(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	d := new(big.Int).Set(r.Denom())
	twos := d.TrailingZeroBits()
	d.Rsh(d, twos)
	fives := uint(0)
	five := big.NewInt(5)
	var q, m big.Int
	for d.Cmp(big.NewInt(1)) != 0 {
		if q.DivMod(d, five, &m); m.Sign() != 0 {
			return r.FloatString(40)
		}
		d.Set(&q)
		fives++
	}
	return r.FloatString(int(max(twos, fives)))
}

// Compare is `Column Op Value`. It is UNKNOWN when the column's value is
// null.
type Compare struct {
	Column string
	Op     Op
	Value  Literal
}

// In is `Column IN (Values...)`, or NOT IN when Not: TRUE when the
// column's value equals one of Values (for NOT IN: none of them), UNKNOWN
// when it is null.
type In struct {
	Column string
	Values []Literal
	Not    bool
}

// IsNull is `Column IS NULL`, or IS NOT NULL when Not. It is never UNKNOWN.
type IsNull struct {
	Column string
	Not    bool
}

// And is `L AND R` (Kleene's: FALSE when either is FALSE, else UNKNOWN when
// either is UNKNOWN).
type And struct{ L, R Expr }

// Or is `L OR R` (TRUE when either is TRUE, else UNKNOWN when either is
// UNKNOWN).
type Or struct{ L, R Expr }

// Not is `NOT X` (UNKNOWN stays UNKNOWN).
type Not struct{ X Expr }

func (Compare) prec() int { return 4 }
func (In) prec() int      { return 4 }
func (IsNull) prec() int  { return 4 }
func (And) prec() int     { return 2 }
func (Or) prec() int      { return 1 }
func (Not) prec() int     { return 3 }

// String is the canonical form: `col op literal`.
func (c Compare) String() string {
	return quoteIdent(c.Column) + " " + c.Op.String() + " " + c.Value.String()
}

// String is the canonical form: `col in (v1, v2)` or `col not in (...)`.
func (c In) String() string {
	var b strings.Builder
	b.WriteString(quoteIdent(c.Column))
	if c.Not {
		b.WriteString(" not")
	}
	b.WriteString(" in (")
	for i, v := range c.Values {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v.String())
	}
	b.WriteString(")")
	return b.String()
}

// String is the canonical form: `col is null` or `col is not null`.
func (c IsNull) String() string {
	if c.Not {
		return quoteIdent(c.Column) + " is not null"
	}
	return quoteIdent(c.Column) + " is null"
}

// String is the canonical form: `l and r`, operands parenthesized where
// precedence (and the left-to-right grouping of a chain) needs it.
func (c And) String() string { return infix(c.L, " and ", c.R, 2) }

// String is the canonical form: `l or r`.
func (c Or) String() string { return infix(c.L, " or ", c.R, 1) }

// String is the canonical form: `not x`.
func (c Not) String() string { return "not " + paren(c.X, c.X.prec() < 3) }

func infix(l Expr, op string, r Expr, p int) string {
	return paren(l, l.prec() < p) + op + paren(r, r.prec() <= p)
}

func paren(e Expr, need bool) string {
	if e == nil {
		return "<nil>"
	}
	if need {
		return "(" + e.String() + ")"
	}
	return e.String()
}

// keywords are the words that are not column names unless backquoted.
var keywords = map[string]bool{"and": true, "or": true, "not": true, "in": true, "is": true, "null": true,
	"true": true, "false": true}

// isBareIdent reports whether s is written without backquotes: an
// identifier that is no keyword.
func isBareIdent(s string) bool {
	if s == "" || keywords[strings.ToLower(s)] {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '.')) {
			return false
		}
	}
	return true
}

// quoteIdent is a column name as the canonical form writes it: bare when it
// can be, else between backquotes with Go's escapes (and \` for a
// backquote).
func quoteIdent(s string) string {
	if isBareIdent(s) {
		return s
	}
	q := strconv.Quote(s)
	q = q[1 : len(q)-1]
	q = strings.ReplaceAll(q, `\"`, `"`)
	q = strings.ReplaceAll(q, "`", "\\`")
	return "`" + q + "`"
}

// Columns is the distinct columns that e reads, in the order of their first
// appearance.
func Columns(e Expr) []string {
	var out []string
	seen := map[string]bool{}
	add := func(c string) {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	var walk func(Expr)
	walk = func(e Expr) {
		switch e := deref(e).(type) {
		case Compare:
			add(e.Column)
		case In:
			add(e.Column)
		case IsNull:
			add(e.Column)
		case And:
			walk(e.L)
			walk(e.R)
		case Or:
			walk(e.L)
			walk(e.R)
		case Not:
			walk(e.X)
		}
	}
	walk(e)
	return out
}

// deref is e with a pointer node (*Compare, ...) replaced by its value, so
// that the package's walks see one form; a nil pointer is nil.
func deref(e Expr) Expr {
	switch p := e.(type) {
	case *Compare:
		if p != nil {
			return *p
		}
	case *In:
		if p != nil {
			return *p
		}
	case *IsNull:
		if p != nil {
			return *p
		}
	case *And:
		if p != nil {
			return *p
		}
	case *Or:
		if p != nil {
			return *p
		}
	case *Not:
		if p != nil {
			return *p
		}
	default:
		return e
	}
	return nil
}
