package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/internal/testdatagen"
)

// TestGroupByAgainstNaive groups the three files of testdata by a
// dictionary column, of the rows a predicate keeps, and compares every
// group's count, exact sum, min and max with a naive computation over the
// generator's rows.
func TestGroupByAgainstNaive(t *testing.T) {
	got := runIn(t, context.Background(), env{}, "--group-by", "color", "--where", "i64 > 0 and flag is not null",
		"-c", "i64", "-a", "count,null_count,sum,min,max", "-f", "json", testdata)
	require.Equal(t, 0, got.code, got.stderr)
	type acc struct {
		rows, count int64
		sum         big.Int
		min, max    int64
	}
	want := map[string]*acc{}
	var rows, kept int64
	for _, f := range testdatagen.Files {
		rec := testdatagen.Record(memory.DefaultAllocator, f, 0, f.Rows)
		var color *array.Dictionary
		var i64 *array.Int64
		var flag *array.Boolean
		for i, c := range rec.Columns() {
			switch rec.ColumnName(i) {
			case "color":
				color = c.(*array.Dictionary)
			case "i64":
				i64 = c.(*array.Int64)
			case "flag":
				flag = c.(*array.Boolean)
			}
		}
		rows += rec.NumRows()
		for r := range int(rec.NumRows()) {
			if i64.IsNull(r) || i64.Value(r) <= 0 || flag.IsNull(r) {
				continue
			}
			kept++
			key := "null"
			if color.IsValid(r) {
				key = fmt.Sprintf("%q", color.Dictionary().(*array.String).Value(color.GetValueIndex(r)))
			}
			a := want[key]
			if a == nil {
				a = &acc{min: i64.Value(r), max: i64.Value(r)}
				want[key] = a
			}
			a.rows++
			a.count++
			a.sum.Add(&a.sum, big.NewInt(i64.Value(r)))
			a.min, a.max = min(a.min, i64.Value(r)), max(a.max, i64.Value(r))
		}
		rec.Release()
	}
	var doc struct {
		Rows   json.Number                  `json:"rows"`
		Files  json.Number                  `json:"files"`
		Kept   json.Number                  `json:"kept"`
		Groups []map[string]json.RawMessage `json:"groups"`
	}
	dec := json.NewDecoder(strings.NewReader(got.stdout))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&doc))
	assert.Equal(t, fmt.Sprint(rows), doc.Rows.String())
	assert.Equal(t, "3", doc.Files.String())
	assert.Equal(t, fmt.Sprint(kept), doc.Kept.String())
	require.Len(t, doc.Groups, len(want))
	var keys []string
	for _, g := range doc.Groups {
		key := string(g["color"])
		keys = append(keys, key)
		a := want[key]
		require.NotNil(t, a, key)
		assert.Equal(t, fmt.Sprint(a.rows), string(g["count_all"]), key)
		assert.Equal(t, fmt.Sprint(a.count), string(g["i64_count"]), key)
		assert.Equal(t, "0", string(g["i64_null_count"]), key)
		assert.Equal(t, a.sum.String(), string(g["i64_sum"]), key)
		assert.Equal(t, fmt.Sprint(a.min), string(g["i64_min"]), key)
		assert.Equal(t, fmt.Sprint(a.max), string(g["i64_max"]), key)
	}
	assert.Equal(t, "null", keys[len(keys)-1], "nulls last")
	assert.IsIncreasing(t, keys[:len(keys)-1], "sorted by key")
}

// TestWhereAlone: --where without --group-by prints the columns' report of
// the rows kept, which for a predicate every row meets is the report
// without it, and "kept".
func TestWhereAlone(t *testing.T) {
	all := runIn(t, context.Background(), env{}, "-c", "i64,word,price", "-f", "json", testdata)
	require.Equal(t, 0, all.code, all.stderr)
	kept := runIn(t, context.Background(), env{}, "-c", "i64,word,price", "-f", "json", "--where", "i64 is null or i64 is not null", testdata)
	require.Equal(t, 0, kept.code, kept.stderr)
	assert.Equal(t, all.stdout, strings.Replace(kept.stdout, "  \"kept\": 2300,\n", "", 1))
	none := runIn(t, context.Background(), env{}, "-c", "i64", "--where", "i64 > 0 and i64 < 0", testdata)
	require.Equal(t, 0, none.code, none.stderr)
	assert.Contains(t, none.stdout, "2300 rows, 3 files, 0 rows kept")
}

// Bad --group-by and --where arguments are usage errors that say what is
// wrong and where.
func TestGroupByErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--where", "i64 >"}, `--where: at offset 5 at the end of the input`},
		{[]string{"--where", "word > 3"}, `column "word"`},
		{[]string{"--where", "nope = 1"}, `unknown column "nope"`},
		{[]string{"--group-by", "nope"}, `unknown column "nope"`},
		{[]string{"--group-by", "tags"}, `unsupported`},
		{[]string{"--group-by", "i64", "-a", "stddev"}, `not available with --group-by`},
		{[]string{"--group-by", ","}, `--group-by: empty column name`},
	} {
		got := runIn(t, context.Background(), env{}, append(tc.args, testdata+"/sample.parquet")...)
		assert.Equal(t, 2, got.code, "%v: %s", tc.args, got.stderr)
		assert.Contains(t, got.stderr, tc.want, "%v", tc.args)
	}
}

// --output writes the groups as Parquet or an Arrow IPC file: the same
// table either way, which the CSV output prints.
func TestGroupOutputFiles(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--group-by", "color,flag", "-c", "i64,word", "-a", "count,sum,min"}
	csvOut := runIn(t, context.Background(), env{}, append(args, "-f", "csv", testdata)...)
	require.Equal(t, 0, csvOut.code, csvOut.stderr)
	lines := strings.Split(strings.TrimSpace(csvOut.stdout), "\n")
	for _, name := range []string{"g.parquet", "g.arrow"} {
		path := filepath.Join(dir, name)
		got := runIn(t, context.Background(), env{}, append(args, "-o", path, testdata)...)
		require.Equal(t, 0, got.code, got.stderr)
		assert.Empty(t, got.stdout)
		assert.Contains(t, got.stderr, fmt.Sprintf("wrote %d groups", len(lines)-1))
		// Read back: the groups' count_all column sums to the rows.
		back := runIn(t, context.Background(), env{}, "-c", "count_all,i64_count", "-a", "count,sum", "-f", "csv", path)
		require.Equal(t, 0, back.code, back.stderr)
		assert.Contains(t, back.stdout, fmt.Sprintf("count_all,int64,%d,,2300,", len(lines)-1), name)
	}
	bad := runIn(t, context.Background(), env{}, append(args, "-o", filepath.Join(dir, "g.csv"), testdata)...)
	assert.Equal(t, 2, bad.code)
	assert.Contains(t, bad.stderr, "want a name ending in .parquet")
}
