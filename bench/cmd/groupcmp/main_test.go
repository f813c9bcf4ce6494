package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func run(t *testing.T, a, b string) *result {
	t.Helper()
	res, err := compare(strings.NewReader(a), strings.NewReader(b), 1e-9, "a", "b")
	require.NoError(t, err)
	return res
}

const header = "k,s,count_all,x_sum,f_sum\n"

func TestAgree(t *testing.T) {
	a := header + "1,x,3,12345678901234567890123,1.5\n2,\"\",1,,NaN\n10,y,2,-4,Inf\n,,5,0,0.30000000000000004\n"
	// b: columns in another order, DuckDB's spellings, CRLF, 0.3 within 1e-9.
	b := "k,s,count_all,f_sum,x_sum\r\n1,x,3,1.5,12345678901234567890123\r\n2,\"\",1,nan,\r\n10,y,2,inf,-4\r\n,,5,0.3,0\r\n"
	res := run(t, a, b)
	assert.Equal(t, 0, res.total, res.diffs)
	assert.Equal(t, 4, res.groups)
	assert.Equal(t, 5, res.columns)
}

func TestDisagree(t *testing.T) {
	a := header + "1,x,3,12345678901234567890123,1.5\n2,x,1,7,2\n3,x,1,0,1\n5,x,1,,1\n"
	b := header + "1,x,3,12345678901234567890124,1.5000000001\n2,x,1,7,2.00000001\n4,x,1,0,1\n5,x,1,0,1\n6,x,1,0,1\n"
	res := run(t, a, b)
	assert.Equal(t, []string{
		"group k=1 s=x: x_sum: a 12345678901234567890123, b 12345678901234567890124", // integers exactly
		// 1.5 and 1.5000000001 agree within 1e-9; 2 and 2.00000001 do not.
		"group k=2 s=x: f_sum: a 2, b 2.00000001",
		"group k=3 s=x: only in a (line 4)",
		"group k=4 s=x: only in b (line 4)",
		"group k=5 s=x: x_sum: a null, b 0",
		"group k=6 s=x: only in b (line 6)",
	}, res.diffs)
	assert.Equal(t, 6, res.total)
	assert.Equal(t, 3, res.groups)
}

// A null key is not the empty string, and sorts last; numbers sort as
// numbers, text byte by byte.
func TestKeys(t *testing.T) {
	a := header + "2,B,1,0,0\n2,a,1,0,0\n10,\"\",1,0,0\n10,,1,0,0\n,a,1,0,0\n"
	res := run(t, a, a)
	assert.Equal(t, 0, res.total, res.diffs)
	assert.Equal(t, 5, res.groups)
	b := header + "2,B,1,0,0\n2,a,1,0,0\n10,,1,0,0\n,a,1,0,0\n"
	res = run(t, a, b)
	assert.Equal(t, []string{`group k=10 s="": only in a (line 4)`}, res.diffs)
}

func TestBadInput(t *testing.T) {
	for name, c := range map[string][2]string{
		"header":   {header, "k,s,count_all,x_sum\n"},
		"keys":     {header, "s,k,count_all,x_sum,f_sum\n"},
		"no count": {"k,x\n", "k,x\n"},
		"width":    {header + "1,x,1,0\n", header},
		"unsorted": {header + "2,x,1,0,0\n1,x,1,0,0\n", header + "2,x,1,0,0\n1,x,1,0,0\n"},
		"quote":    {header + "1,\"x,1,0,0\n", header},
	} {
		_, err := compare(strings.NewReader(c[0]), strings.NewReader(c[1]), 1e-9, "a", "b")
		assert.Error(t, err, name)
	}
}

// Quoted fields: commas, doubled quotes and line breaks inside them.
func TestQuoted(t *testing.T) {
	a := header + "1,\"a,b\",1,0,0\n1,\"x\"\"y\",1,0,0\n1,\"z\nz\",1,0,0\n"
	res := run(t, a, a)
	assert.Equal(t, 0, res.total, res.diffs)
	assert.Equal(t, 3, res.groups)
	b := header + "1,\"a,b\",1,0,0\n1,\"x\"\"z\",1,0,0\n1,\"z\nz\",1,0,0\n"
	assert.Equal(t, []string{`group k=1 s="x\"y": only in a (line 3)`, `group k=1 s="x\"z": only in b (line 3)`}, run(t, a, b).diffs)
}
