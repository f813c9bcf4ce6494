package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// opaqueColumns are columns of types arrowagg counts but neither orders nor
// sums, as JSON, 4 rows each; parquet says whether pqarrow writes the type.
var opaqueColumns = []struct {
	name    string
	dt      arrow.DataType
	js      string
	parquet bool
}{
	{"tags", arrow.ListOf(arrow.BinaryTypes.String), `[["a"], null, [], ["b", null]]`, true},
	{"attrs", arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), `[[{"key": "k", "value": 1}], [], null, null]`, true},
	{"s", arrow.StructOf(arrow.Field{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true}),
		`[{"l": [1]}, null, {"l": null}, {"l": []}]`, true},
	{"big", &arrow.Decimal256Type{Precision: 40, Scale: 2}, `["1.00", null, "2.00", "3.00"]`, true},
	{"runs", arrow.RunEndEncodedOf(arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String), `["x", "x", null, "y"]`, false},
	{"sv", arrow.BinaryTypes.StringView, `["a", null, "bcd", null]`, false},
}

// opaqueRecord is the record of the opaque columns (those pqarrow writes,
// when forParquet).
func opaqueRecord(t *testing.T, forParquet bool) arrow.Record {
	t.Helper()
	var fields []arrow.Field
	var cols []arrow.Array
	for _, c := range opaqueColumns {
		if forParquet && !c.parquet {
			continue
		}
		arr, _, err := array.FromJSON(memory.DefaultAllocator, c.dt, strings.NewReader(c.js))
		require.NoError(t, err, c.name)
		defer arr.Release()
		fields = append(fields, arrow.Field{Name: c.name, Type: c.dt, Nullable: true})
		cols = append(cols, arr)
	}
	return array.NewRecord(arrow.NewSchema(fields, nil), cols, 4)
}

// opaqueInputs writes, in a directory of its own, opaque.arrow (every
// opaque column) and opaque.parquet (those pqarrow writes): files of no
// column arrowagg sums or orders.
func opaqueInputs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	rec := opaqueRecord(t, false)
	defer rec.Release()
	f, err := os.Create(filepath.Join(dir, "opaque.arrow"))
	require.NoError(t, err)
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(rec.Schema()))
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())

	prec := opaqueRecord(t, true)
	defer prec.Release()
	f, err = os.Create(filepath.Join(dir, "opaque.parquet"))
	require.NoError(t, err)
	pw, err := pqarrow.NewFileWriter(prec.Schema(), f, parquet.NewWriterProperties(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	require.NoError(t, err)
	require.NoError(t, pw.Write(prec))
	require.NoError(t, pw.Close())
	return dir
}

// unionInput writes union.arrow, a file of one sparse union column, which
// has no nulls of its own: its second element's child value is null.
func unionInput(t *testing.T, dir string) string {
	t.Helper()
	u, _, err := array.FromJSON(memory.DefaultAllocator, arrow.SparseUnionOf([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int8, Nullable: true}},
		[]arrow.UnionTypeCode{0}), strings.NewReader(`[[0, 1], [0, null]]`))
	require.NoError(t, err)
	defer u.Release()
	path := filepath.Join(dir, "union.arrow")
	writeIPCFile(t, path, arrow.Field{Name: "u", Type: u.DataType(), Nullable: true}, u)
	return path
}

// emptyStructInput writes empty.arrow, a file of one column arrowagg has
// nothing of to aggregate (a struct without fields), into dir.
func emptyStructInput(t *testing.T, dir string) string {
	t.Helper()
	data := array.NewData(arrow.StructOf(), 2, []*memory.Buffer{nil}, nil, 0, 0)
	defer data.Release()
	e := array.NewStructData(data)
	defer e.Release()
	path := filepath.Join(dir, "empty.arrow")
	writeIPCFile(t, path, arrow.Field{Name: "e", Type: e.DataType(), Nullable: true}, e)
	return path
}

const emptyNote = "arrowagg: note: skipping column \"e\": empty struct has no leaf to aggregate\n"

// The opaque columns answer count and null_count, the nulls that Arrow
// tells (IsNull; a list of a null struct is null), whatever else is asked
// and in every format, and --schema says they are aggregated.
func TestOpaqueColumnsCounted(t *testing.T) {
	dir := opaqueInputs(t)
	want := map[string][2]int64{}
	rec := opaqueRecord(t, false)
	for i, c := range opaqueColumns {
		name, arr := c.name, rec.Column(i)
		if c.name == "s" { // the leaf s.l: null where s or l is
			name = "s.l"
			st := arr.(*array.Struct)
			var w [2]int64
			for r := 0; r < st.Len(); r++ {
				if st.IsNull(r) || st.Field(0).IsNull(r) {
					w[1]++
				} else {
					w[0]++
				}
			}
			want[name] = w
			continue
		}
		nulls := int64(arr.NullN())
		if c.name == "runs" { // the runs' values' nulls: row 2
			nulls = 1
		}
		want[name] = [2]int64{int64(arr.Len()) - nulls, nulls}
	}
	rec.Release()
	for _, in := range []string{"opaque.arrow", "opaque.parquet"} {
		for _, aggs := range []string{"count,null_count", "count,null_count,sum,min,max,mean,first,last,arg_min,arg_max", "sum"} {
			got := runIn(t, context.Background(), env{}, "-f", "json", "--device", "cpu", "-a", aggs, filepath.Join(dir, in))
			require.Equal(t, 0, got.code, got.stderr)
			assert.Empty(t, got.stderr)
			var doc struct{ Columns []map[string]any }
			require.NoError(t, json.Unmarshal([]byte(got.stdout), &doc))
			require.NotEmpty(t, doc.Columns)
			for _, c := range doc.Columns {
				name := c["name"].(string)
				w, ok := want[name]
				require.True(t, ok, name)
				for k, v := range c {
					switch k {
					case "name", "type":
					case "count":
						if strings.Contains(aggs, "count") {
							assert.EqualValues(t, w[0], v, "%s %s %s", in, name, aggs)
						}
					case "null_count":
						if strings.Contains(aggs, "null_count") {
							assert.EqualValues(t, w[1], v, "%s %s %s", in, name, aggs)
						}
					default:
						assert.Nil(t, v, "%s %s %s: %s", in, name, aggs, k)
					}
				}
			}
		}
		got := runIn(t, context.Background(), env{}, "--schema", "-f", "json", filepath.Join(dir, in))
		require.Equal(t, 0, got.code, got.stderr)
		var sch struct {
			Columns []struct {
				Name       string
				Aggregated bool
				Reason     *string
			}
		}
		require.NoError(t, json.Unmarshal([]byte(got.stdout), &sch))
		for _, c := range sch.Columns {
			if strings.ContainsAny(c.Name, "[{") { // the elements of a list or map, named with -c
				assert.False(t, c.Aggregated, "%s %s", in, c.Name)
				assert.Equal(t, elementReason, *c.Reason, "%s %s", in, c.Name)
				continue
			}
			assert.True(t, c.Aggregated, "%s %s", in, c.Name)
		}
	}
}

// A union is counted by the child values its elements select, named or
// not; a column with nothing to aggregate is left out: named, an error;
// among others, a note.
func TestUnionCountedEmptyStructLeftOut(t *testing.T) {
	dir := t.TempDir()
	path := unionInput(t, dir)
	for _, args := range [][]string{{"-c", "u", path}, {path}} {
		got := runIn(t, context.Background(), env{}, append([]string{"-f", "json"}, args...)...)
		require.Equal(t, 0, got.code, got.stderr)
		assert.Empty(t, got.stderr)
		assert.Contains(t, got.stdout, `"name": "u", "type": "sparse_union<i: type=int8, nullable=0>", "count": 1, "null_count": 1, "sum": null, "min": null,`)
	}
	empty := emptyStructInput(t, dir)
	got := runIn(t, context.Background(), env{}, "-c", "e", empty)
	assert.Equal(t, exitInput, got.code)
	assert.Equal(t, "arrowagg: "+empty+`: column "e": empty struct has no leaf to aggregate`+"\n", got.stderr)
	got = runIn(t, context.Background(), env{}, "-f", "json", empty, testdata+"/sample.arrow")
	assert.Equal(t, 0, got.code, got.stderr)
	assert.Equal(t, emptyNote, got.stderr)
}

// Columns whose names repeat are all aggregated: the k-th repeat of N is
// N_k, past the names other columns have, with a note once per renamed
// column, and selected by that name.
func TestRepeatedNamesRenamed(t *testing.T) {
	mem := memory.DefaultAllocator
	arr := func(dt arrow.DataType, js string) arrow.Array {
		a, _, err := array.FromJSON(mem, dt, strings.NewReader(js))
		require.NoError(t, err)
		t.Cleanup(a.Release)
		return a
	}
	cols := []arrow.Array{
		arr(arrow.PrimitiveTypes.Int8, `[1, 2, null]`),
		arr(arrow.PrimitiveTypes.Int32, `[10, null, null]`),
		arr(arrow.PrimitiveTypes.Int64, `[100, 200, 300]`),
		arr(arrow.BinaryTypes.String, `["a", "b", "c"]`),
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: cols[0].DataType(), Nullable: true},
		{Name: "x", Type: cols[1].DataType(), Nullable: true},
		{Name: "x_1", Type: cols[2].DataType(), Nullable: true},
		{Name: "x", Type: cols[3].DataType(), Nullable: true},
	}, nil)
	rec := array.NewRecord(schema, cols, 3)
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "repeated.arrow")
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())

	got := runIn(t, context.Background(), env{}, "-f", "json", "-a", "count,null_count,sum", path)
	require.Equal(t, 0, got.code, got.stderr)
	assert.Equal(t, `arrowagg: note: the 2nd column named "x" (int32) is reported as "x_2" (select it with -c x_2)
arrowagg: note: the 3rd column named "x" (utf8) is reported as "x_3" (select it with -c x_3)
`, got.stderr)
	var doc struct {
		Columns []struct {
			Name      string
			Type      string
			Count     int64
			NullCount int64 `json:"null_count"`
			Sum       any
		}
	}
	require.NoError(t, json.Unmarshal([]byte(got.stdout), &doc))
	var names []string
	for _, c := range doc.Columns {
		names = append(names, c.Name+" "+c.Type)
	}
	assert.Equal(t, []string{"x int8", "x_2 int32", "x_1 int64", "x_3 utf8"}, names)
	assert.Equal(t, [2]int64{1, 2}, [2]int64{doc.Columns[1].Count, doc.Columns[1].NullCount})
	assert.Equal(t, [2]int64{3, 0}, [2]int64{doc.Columns[3].Count, doc.Columns[3].NullCount})
	assert.EqualValues(t, 10, doc.Columns[1].Sum)
	assert.EqualValues(t, 600, doc.Columns[2].Sum)

	got = runIn(t, context.Background(), env{}, "-f", "csv", "-a", "count,sum", "-c", "x_2", path)
	require.Equal(t, 0, got.code, got.stderr)
	assert.Equal(t, "name,type,count,null_count,sum,min,max,mean\nx_2,int32,1,,10,,,\n", got.stdout)
}
