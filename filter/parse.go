package filter

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SyntaxError is an error of Parse: what was expected (Msg) at the byte
// Offset of the offending token in the source, whose text is Near (empty at
// the end of the input).
type SyntaxError struct {
	Offset int
	Near   string
	Msg    string
}

// Error reads `where: at offset 12 near "foo": expected a comparison
// operator`.
func (e *SyntaxError) Error() string {
	if e.Near == "" {
		return fmt.Sprintf("where: at offset %d at the end of the input: %s", e.Offset, e.Msg)
	}
	return fmt.Sprintf("where: at offset %d near %q: %s", e.Offset, e.Near, e.Msg)
}

// maxDepth bounds the nesting of parentheses and NOTs that Parse reads.
const maxDepth = 1000

// maxExponent bounds the exponent of a number literal (1e400 is far past
// every column's range, and an exact 10^n costs memory in n).
const maxExponent = 1000

// Parse reads a predicate. The grammar, keywords case-insensitive:
//
//	expr    = and { "or" and }
//	and     = not { "and" not }
//	not     = "not" not | primary
//	primary = "(" expr ")"
//	        | column ( op literal
//	                 | ["not"] "in" "(" literal { "," literal } ")"
//	                 | "is" ["not"] "null" )
//	op      = "=" | "==" | "!=" | "<>" | "<" | "<=" | ">" | ">="
//	literal = number | string | "true" | "false"
//
// A column is an identifier, [A-Za-z_][A-Za-z0-9_.]* that is not a keyword,
// or any name between backquotes (`unit price`). Strings are between double
// or single quotes, with Go's backslash escapes (\n, \t, \xNN, \u1234, \\,
// \", \', ...). Numbers are decimal, with an optional leading minus, fraction
// and exponent (10, -3, 10.25, .5, 1e-3), read exactly. AND and OR group
// from the left. Its errors are *SyntaxError.
func Parse(src string) (Expr, error) {
	p := &parser{lx: lexer{src: src}}
	if err := p.next(); err != nil {
		return nil, err
	}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tEOF {
		return nil, p.errf("expected AND, OR or the end of the predicate")
	}
	return e, nil
}

type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tKeyword // text lowered
	tNumber
	tString
	tOp
	tLParen
	tRParen
	tComma
)

type token struct {
	kind tokKind
	off  int
	text string // source text (lowered for keywords; the name for identifiers)
	str  string // tString: the decoded bytes
	num  *big.Rat
	op   Op
}

type lexer struct {
	src string
	pos int
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || c >= '0' && c <= '9' || c == '.' }
func isDigit(c byte) bool      { return c >= '0' && c <= '9' }

func lexErr(off int, near, msg string) *SyntaxError {
	if len(near) > 32 {
		near = near[:32]
	}
	return &SyntaxError{Offset: off, Near: near, Msg: msg}
}

// next reads the next token.
func (lx *lexer) next() (token, error) {
	s := lx.src
	for lx.pos < len(s) && (s[lx.pos] == ' ' || s[lx.pos] == '\t' || s[lx.pos] == '\n' || s[lx.pos] == '\r') {
		lx.pos++
	}
	start := lx.pos
	if start >= len(s) {
		return token{kind: tEOF, off: start}, nil
	}
	c := s[start]
	switch {
	case isIdentStart(c):
		end := start + 1
		for end < len(s) && isIdentChar(s[end]) {
			end++
		}
		lx.pos = end
		word := s[start:end]
		if low := strings.ToLower(word); keywords[low] {
			return token{kind: tKeyword, off: start, text: low}, nil
		}
		return token{kind: tIdent, off: start, text: word}, nil
	case c == '`' || c == '"' || c == '\'':
		v, err := lx.quoted(c)
		if err != nil {
			return token{}, err
		}
		if c == '`' {
			if v == "" {
				return token{}, lexErr(start, s[start:lx.pos], "empty column name")
			}
			return token{kind: tIdent, off: start, text: v}, nil
		}
		return token{kind: tString, off: start, text: s[start:lx.pos], str: v}, nil
	case isDigit(c) || c == '.' || c == '-':
		return lx.number()
	case c == '(':
		lx.pos++
		return token{kind: tLParen, off: start, text: "("}, nil
	case c == ')':
		lx.pos++
		return token{kind: tRParen, off: start, text: ")"}, nil
	case c == ',':
		lx.pos++
		return token{kind: tComma, off: start, text: ","}, nil
	}
	two := ""
	if start+2 <= len(s) {
		two = s[start : start+2]
	}
	var op Op
	switch {
	case two == "==":
		op = Eq
	case two == "!=" || two == "<>":
		op = Ne
	case two == "<=":
		op = Le
	case two == ">=":
		op = Ge
	case c == '=':
		op = Eq
	case c == '<':
		op = Lt
	case c == '>':
		op = Gt
	default:
		r, n := utf8.DecodeRuneInString(s[start:])
		if r == utf8.RuneError {
			n = 1
		}
		return token{}, lexErr(start, s[start:start+n], "unexpected character")
	}
	n := 1
	if op == Ne || op == Le || op == Ge || two == "==" {
		n = 2
	}
	lx.pos += n
	return token{kind: tOp, off: start, text: s[start : start+n], op: op}, nil
}

// quoted reads a quoted string or column name starting at lx.pos (the quote
// q) and returns its decoded bytes.
func (lx *lexer) quoted(q byte) (string, error) {
	s := lx.src
	start := lx.pos
	var b []byte
	i := start + 1
	for {
		if i >= len(s) {
			what := "unterminated string"
			if q == '`' {
				what = "unterminated column name"
			}
			return "", lexErr(start, s[start:], what)
		}
		c := s[i]
		switch {
		case c == q:
			lx.pos = i + 1
			return string(b), nil
		case c != '\\':
			b = append(b, c)
			i++
		case i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\'' || s[i+1] == '`' || s[i+1] == '\\'):
			b = append(b, s[i+1])
			i += 2
		default:
			v, multibyte, tail, err := strconv.UnquoteChar(s[i:], 0)
			if err != nil {
				end := min(i+2, len(s))
				return "", lexErr(i, s[i:end], "invalid escape sequence")
			}
			if multibyte {
				b = utf8.AppendRune(b, v)
			} else {
				b = append(b, byte(v))
			}
			i = len(s) - len(tail)
		}
	}
}

// number reads a number literal exactly.
func (lx *lexer) number() (token, error) {
	s := lx.src
	start := lx.pos
	i := start
	neg := false
	if s[i] == '-' {
		neg = true
		i++
	}
	intStart := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	digits := s[intStart:i]
	frac := ""
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		frac = s[fs:i]
	}
	if digits == "" && frac == "" {
		end := min(start+1, len(s))
		if neg && i < len(s) {
			end = i + 1
		}
		return token{}, lexErr(start, s[start:end], "unexpected character")
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		es := j
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if es == j {
			return token{}, lexErr(start, s[start:j], "malformed number: expected the exponent's digits")
		}
		e, err := strconv.Atoi(s[i+1 : j])
		if err != nil || e > maxExponent || e < -maxExponent {
			return token{}, lexErr(start, s[start:j], fmt.Sprintf("number out of range: exponents go from -%d to %d", maxExponent, maxExponent))
		}
		exp = e
		i = j
	}
	if i < len(s) && (isIdentChar(s[i]) || s[i] == '.') {
		end := i + 1
		for end < len(s) && isIdentChar(s[end]) {
			end++
		}
		return token{}, lexErr(start, s[start:end], "malformed number")
	}
	lx.pos = i
	m, ok := new(big.Int).SetString("0"+digits+frac, 10)
	if !ok {
		return token{}, lexErr(start, s[start:i], "malformed number")
	}
	if neg {
		m.Neg(m)
	}
	r := new(big.Rat).SetInt(m)
	exp -= len(frac)
	if exp != 0 {
		p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(exp))), nil)
		if exp > 0 {
			r.Mul(r, new(big.Rat).SetInt(p))
		} else {
			r.Quo(r, new(big.Rat).SetInt(p))
		}
	}
	return token{kind: tNumber, off: start, text: s[start:i], num: r}, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

type parser struct {
	lx    lexer
	tok   token
	depth int
}

func (p *parser) next() error {
	t, err := p.lx.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

// errf is a SyntaxError at the current token.
func (p *parser) errf(format string, args ...any) error {
	near := p.tok.text
	if p.tok.kind == tIdent || p.tok.kind == tKeyword {
		near = p.lx.src[p.tok.off:p.lx.pos]
	}
	return lexErr(p.tok.off, near, fmt.Sprintf(format, args...))
}

func (p *parser) isKeyword(k string) bool { return p.tok.kind == tKeyword && p.tok.text == k }

func (p *parser) or() (Expr, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.isKeyword("or") {
		if err := p.next(); err != nil {
			return nil, err
		}
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = Or{L: l, R: r}
	}
	return l, nil
}

func (p *parser) and() (Expr, error) {
	l, err := p.not()
	if err != nil {
		return nil, err
	}
	for p.isKeyword("and") {
		if err := p.next(); err != nil {
			return nil, err
		}
		r, err := p.not()
		if err != nil {
			return nil, err
		}
		l = And{L: l, R: r}
	}
	return l, nil
}

func (p *parser) not() (Expr, error) {
	if !p.isKeyword("not") {
		return p.primary()
	}
	if p.depth++; p.depth > maxDepth {
		return nil, p.errf("predicate nested too deeply (more than %d levels)", maxDepth)
	}
	defer func() { p.depth-- }()
	if err := p.next(); err != nil {
		return nil, err
	}
	x, err := p.not()
	if err != nil {
		return nil, err
	}
	return Not{X: x}, nil
}

func (p *parser) primary() (Expr, error) {
	switch p.tok.kind {
	case tLParen:
		if p.depth++; p.depth > maxDepth {
			return nil, p.errf("predicate nested too deeply (more than %d levels)", maxDepth)
		}
		defer func() { p.depth-- }()
		if err := p.next(); err != nil {
			return nil, err
		}
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.tok.kind != tRParen {
			return nil, p.errf("expected ) or a logical operator")
		}
		return e, p.next()
	case tIdent:
	default:
		return nil, p.errf("expected a column name, NOT or (")
	}
	col := p.tok.text
	if err := p.next(); err != nil {
		return nil, err
	}
	switch {
	case p.tok.kind == tOp:
		op := p.tok.op
		if err := p.next(); err != nil {
			return nil, err
		}
		v, err := p.literal()
		if err != nil {
			return nil, err
		}
		return Compare{Column: col, Op: op, Value: v}, nil
	case p.isKeyword("in"):
		return p.in(col, false)
	case p.isKeyword("not"):
		if err := p.next(); err != nil {
			return nil, err
		}
		if !p.isKeyword("in") {
			return nil, p.errf("expected IN after NOT")
		}
		return p.in(col, true)
	case p.isKeyword("is"):
		if err := p.next(); err != nil {
			return nil, err
		}
		not := p.isKeyword("not")
		if not {
			if err := p.next(); err != nil {
				return nil, err
			}
		}
		if !p.isKeyword("null") {
			return nil, p.errf("expected NULL")
		}
		return IsNull{Column: col, Not: not}, p.next()
	}
	return nil, p.errf("expected a comparison operator, IN or IS after column %s", quoteIdent(col))
}

// in reads the list of `col [not] in (...)`, the current token being IN.
func (p *parser) in(col string, not bool) (Expr, error) {
	if err := p.next(); err != nil {
		return nil, err
	}
	if p.tok.kind != tLParen {
		return nil, p.errf("expected ( after IN")
	}
	if err := p.next(); err != nil {
		return nil, err
	}
	var vals []Literal
	for {
		v, err := p.literal()
		if err != nil {
			return nil, err
		}
		vals = append(vals, v)
		switch p.tok.kind {
		case tComma:
			if err := p.next(); err != nil {
				return nil, err
			}
			continue
		case tRParen:
			return In{Column: col, Values: vals, Not: not}, p.next()
		}
		return nil, p.errf("expected , or ) in the IN list")
	}
}

// literal reads a literal, the current token.
func (p *parser) literal() (Literal, error) {
	var l Literal
	switch {
	case p.tok.kind == tNumber:
		l = Literal{Kind: NumberLit, Num: p.tok.num}
	case p.tok.kind == tString:
		l = String(p.tok.str)
	case p.isKeyword("true"), p.isKeyword("false"):
		l = Bool(p.tok.text == "true")
	case p.isKeyword("null"):
		return l, p.errf("a comparison with null is never true: use IS NULL or IS NOT NULL")
	default:
		return l, p.errf("expected a literal (a number, a string, true or false)")
	}
	return l, p.next()
}
