package filter

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseValid(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`price > 10 and region in ("EU","US")`, `price > 10 and region in ("EU", "US")`},
		{`not (a is null or b <> 'x')`, `not (a is null or b != "x")`},
		{`A == 1`, `A = 1`},
		{`x>=-10.250`, `x >= -10.25`},
		{`x < 1e3`, `x < 1000`},
		{`x < 1.5E-2`, `x < 0.015`},
		{`x = .5`, `x = 0.5`},
		{`x = 1.`, `x = 1`},
		{`x = -0`, `x = 0`},
		{`x = -0.0e+7`, `x = 0`},
		{`x <= 123456789012345678901234567890.000000000000000000001`, `x <= 123456789012345678901234567890.000000000000000000001`},
		{"`a b` = 1", "`a b` = 1"},
		{"`and` = TRUE", "`and` = true"},
		{"`x\\`y` is null", "`x\\`y` is null"},
		{"`1st` < 2", "`1st` < 2"},
		{`a.b_c IS NOT NULL`, `a.b_c is not null`},
		{`x NOT IN (1, 2,3)`, `x not in (1, 2, 3)`},
		{`x In (true)`, `x in (true)`},
		{`a = 1 or b = 2 and c = 3`, `a = 1 or b = 2 and c = 3`},
		{`(a = 1 or b = 2) and c = 3`, `(a = 1 or b = 2) and c = 3`},
		{`a = 1 and (b = 2 and c = 3)`, `a = 1 and (b = 2 and c = 3)`},
		{`a = 1 or (b = 2 or c = 3)`, `a = 1 or (b = 2 or c = 3)`},
		{`((a = 1))`, `a = 1`},
		{`NOT not a is null`, `not not a is null`},
		{`not a = 1 and b = 2`, `not a = 1 and b = 2`},
		{`not (a = 1 and b = 2)`, `not (a = 1 and b = 2)`},
		{`s = "tab\there\"q\\"`, `s = "tab\there\"q\\"`},
		{`s = '\x00\xff'`, `s = "\x00\xff"`},
		{`s = 'it\'s'`, `s = "it's"`},
		{`s = "\u00e9\101"`, `s = "éA"`},
		{`f = FALSE`, `f = false`},
		{" a\t=\n1 ", "a = 1"},
	} {
		e, err := Parse(c.src)
		require.NoError(t, err, c.src)
		assert.Equal(t, c.want, e.String(), c.src)
		again, err := Parse(e.String())
		require.NoError(t, err, e.String())
		assert.Equal(t, c.want, again.String())
	}
}

func TestParseTree(t *testing.T) {
	e, err := Parse(`price > 10 and region in ("EU","US") or not b is not null`)
	require.NoError(t, err)
	want := Or{
		L: And{
			L: Compare{Column: "price", Op: Gt, Value: Int(10)},
			R: In{Column: "region", Values: []Literal{String("EU"), String("US")}},
		},
		R: Not{X: IsNull{Column: "b", Not: true}},
	}
	assert.Equal(t, want.String(), e.String())
	or, ok := e.(Or)
	require.True(t, ok)
	and, ok := or.L.(And)
	require.True(t, ok)
	cmp, ok := and.L.(Compare)
	require.True(t, ok)
	assert.Equal(t, "price", cmp.Column)
	assert.Equal(t, Gt, cmp.Op)
	assert.Equal(t, 0, cmp.Value.Num.Cmp(big.NewRat(10, 1)))
	assert.Equal(t, []string{"price", "region", "b"}, Columns(e))

	e, err = Parse(`x > 10.25`)
	require.NoError(t, err)
	assert.Equal(t, 0, e.(Compare).Value.Num.Cmp(big.NewRat(41, 4)), "decimals are exact")
	assert.Equal(t, []string{"a", "b"}, Columns(&And{L: &Compare{Column: "a", Op: Eq, Value: Int(1)}, R: Or{L: IsNull{Column: "b"}, R: Not{X: In{Column: "a", Values: []Literal{Int(1)}}}}}))
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		src    string
		offset int
		near   string
		msg    string
	}{
		{`price > 10 foo`, 11, "foo", "expected AND, OR or the end of the predicate"},
		{`foo bar = 1`, 4, "bar", "expected a comparison operator, IN or IS after column foo"},
		{`price > 10 and foo`, 18, "", "expected a comparison operator, IN or IS after column foo"},
		{"`a b` 1", 6, "1", "expected a comparison operator, IN or IS after column `a b`"},
		{`x = null`, 4, "null", "a comparison with null is never true: use IS NULL or IS NOT NULL"},
		{`x in (1, NULL)`, 9, "NULL", "a comparison with null is never true: use IS NULL or IS NOT NULL"},
		{`x = `, 4, "", "expected a literal (a number, a string, true or false)"},
		{`x = y`, 4, "y", "expected a literal (a number, a string, true or false)"},
		{`x in ()`, 6, ")", "expected a literal (a number, a string, true or false)"},
		{`x in (1 2)`, 8, "2", "expected , or ) in the IN list"},
		{`x in 1`, 5, "1", "expected ( after IN"},
		{`(x = 1`, 6, "", "expected ) or a logical operator"},
		{`x = 'abc`, 4, "'abc", "unterminated string"},
		{"`abc = 1", 0, "`abc = 1", "unterminated column name"},
		{`x = 1abc`, 4, "1abc", "malformed number"},
		{`x = 1.2.3`, 4, "1.2.3", "malformed number"},
		{`x = 1e`, 4, "1e", "malformed number: expected the exponent's digits"},
		{`x = 1e5000`, 4, "1e5000", "number out of range: exponents go from -1000 to 1000"},
		{`x = -a`, 4, "-a", "unexpected character"},
		{`x ! 1`, 2, "!", "unexpected character"},
		{`x = "\q"`, 5, `\q`, "invalid escape sequence"},
		{"`` = 1", 0, "``", "empty column name"},
		{`x is not 1`, 9, "1", "expected NULL"},
		{`x not like 1`, 6, "like", "expected IN after NOT"},
		{`and = 1`, 0, "and", "expected a column name, NOT or ("},
		{`x = 1 and`, 9, "", "expected a column name, NOT or ("},
		{`x = 1 AND Or`, 10, "Or", "expected a column name, NOT or ("},
		{`1 = x`, 0, "1", "expected a column name, NOT or ("},
		{``, 0, "", "expected a column name, NOT or ("},
		{`x = é`, 4, "é", "unexpected character"},
	} {
		_, err := Parse(c.src)
		require.Error(t, err, c.src)
		var se *SyntaxError
		require.ErrorAs(t, err, &se, c.src)
		assert.Equal(t, c.offset, se.Offset, c.src)
		assert.Equal(t, c.near, se.Near, c.src)
		assert.Equal(t, c.msg, se.Msg, c.src)
	}
	_, err := Parse(`price > 10 foo`)
	assert.EqualError(t, err, `where: at offset 11 near "foo": expected AND, OR or the end of the predicate`)
	_, err = Parse(`x =`)
	assert.EqualError(t, err, `where: at offset 3 at the end of the input: expected a literal (a number, a string, true or false)`)

	deep := ""
	for range maxDepth + 1 {
		deep += "("
	}
	_, err = Parse(deep + "x = 1")
	var se *SyntaxError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, maxDepth, se.Offset)
	assert.Contains(t, se.Msg, "nested too deeply")
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`price > 10 and region in ("EU","US")`, `not (a is null or b <> 'x')`,
		"`a b` = -1.5e3", `s = "\x00\u00e9"`, `x not in (1, 2) or not not y is not null`, `x = .5e-2`,
		`(a = 1 or b = 2) and c = true`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Parse(src)
		if err != nil {
			var se *SyntaxError
			require.ErrorAs(t, err, &se)
			require.GreaterOrEqual(t, se.Offset, 0)
			require.LessOrEqual(t, se.Offset, len(src))
			return
		}
		s := e.String()
		again, err := Parse(s)
		require.NoError(t, err, "%q printed as %q", src, s)
		require.Equal(t, s, again.String())
	})
}

func TestFormatNumbers(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"1e-30", "0.000000000000000000000000000001"},
		{"-2.5e-3", "-0.0025"},
		{"12.5e1", "125"},
		{"0.125", "0.125"},
	} {
		e, err := Parse("x = " + c.src)
		require.NoError(t, err)
		assert.Equal(t, "x = "+c.want, e.String())
	}
	e, err := Parse("x = 1e-1000")
	require.NoError(t, err)
	again, err := Parse(e.String())
	require.NoError(t, err)
	assert.Equal(t, 0, again.(Compare).Value.Num.Cmp(e.(Compare).Value.Num), "exact through the canonical form")
	assert.Equal(t, "0.3333333333333333333333333333333333333333", Number(big.NewRat(1, 3)).String())
}
