package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/engine"
)

func TestFormatFloat(t *testing.T) {
	cases := []struct {
		f    float64
		bits int
		want string
	}{
		{0, 64, "0.0"},
		{math.Copysign(0, -1), 64, "-0.0"},
		{1, 64, "1.0"},
		{42, 64, "42.0"},
		{0.1, 64, "0.1"},
		{-2.5, 64, "-2.5"},
		{123456789, 64, "123456789.0"},
		{9007199254740992, 64, "9007199254740992.0"},
		{42578474746540770, 64, "4.257847474654077e+16"},
		{6374628540732951412, 64, "6.374628540732952e+18"},
		{1e16, 64, "1e+16"},
		{1e20, 64, "1e+20"},
		{1.5e300, 64, "1.5e+300"},
		{1e-4, 64, "0.0001"},
		{1e-5, 64, "1e-05"},
		{1e-7, 64, "1e-07"},
		{5e-324, 64, "5e-324"},
		{math.MaxFloat64, 64, "1.7976931348623157e+308"},
		{float64(float32(0.1)), 32, "0.1"},
		{float64(float32(5.9604645e-8)), 32, "5.9604645e-08"},
		{float64(float32(3.4e38)), 32, "3.4e+38"},
	}
	for _, c := range cases {
		got := formatFloat(c.f, c.bits)
		assert.Equal(t, c.want, got, "%v (%d bits)", c.f, c.bits)
		assert.True(t, json.Valid([]byte(got)), "%q is a JSON number", got)
		back, err := strconv.ParseFloat(got, c.bits)
		require.NoError(t, err)
		assert.Equal(t, math.Float64bits(c.f), math.Float64bits(back), "%q reads back as %v", got, c.f)
	}
}

func TestBinaryText(t *testing.T) {
	for in, want := range map[string]string{
		"ALGERIA": "ALGERIA", "日本語": "日本語", "": "",
		"\x00\xff": `\x00\xFF`, `a\b`: `a\x5Cb`, "tab\there": `tab\x09here`, "\xe6\x97": `\xE6\x97`,
	} {
		assert.Equal(t, want, binaryText([]byte(in)), "%q", in)
	}
}

func TestFloatValueSpecials(t *testing.T) {
	assert.Equal(t, textOf("NaN"), floatValue(math.NaN(), 64))
	assert.Equal(t, textOf("Inf"), floatValue(math.Inf(1), 64))
	assert.Equal(t, textOf("-Inf"), floatValue(math.Inf(-1), 32))
	assert.Equal(t, numberOf("2.0"), floatValue(2, 64))
}

func TestFormatDecimal(t *testing.T) {
	cases := []struct {
		unscaled string
		scale    int32
		want     string
	}{
		{"0", 2, "0.00"},
		{"5", 2, "0.05"},
		{"-5", 2, "-0.05"},
		{"12345", 2, "123.45"},
		{"-6624558864781", 2, "-66245588647.81"},
		{"100", 0, "100"},
		{"7", -3, "7000"},
		{"0", -3, "0"},
		{"-1", 5, "-0.00001"},
		{"123456789012345678901234567890123456789012", 4, "12345678901234567890123456789012345678.9012"},
	}
	for _, c := range cases {
		v, ok := new(big.Int).SetString(c.unscaled, 10)
		require.True(t, ok)
		assert.Equal(t, c.want, formatDecimal(v, c.scale), "%s scale %d", c.unscaled, c.scale)
	}
}

func TestFormatTimestamp(t *testing.T) {
	cases := []struct {
		v    int64
		unit arrow.TimeUnit
		want string
	}{
		{0, arrow.Second, "1970-01-01T00:00:00Z"},
		{951782400, arrow.Second, "2000-02-29T00:00:00Z"},
		{1500, arrow.Millisecond, "1970-01-01T00:00:01.5Z"},
		{-1, arrow.Millisecond, "1969-12-31T23:59:59.999Z"},
		{1_000_001, arrow.Microsecond, "1970-01-01T00:00:01.000001Z"},
		{-1, arrow.Nanosecond, "1969-12-31T23:59:59.999999999Z"},
		{1_700_000_000_123_456_000, arrow.Nanosecond, "2023-11-14T22:13:20.123456Z"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, formatTimestamp(c.v, c.unit), "%d %s", c.v, c.unit)
	}
}

func TestFormatTime(t *testing.T) {
	cases := []struct {
		v    int64
		unit arrow.TimeUnit
		want string
	}{
		{0, arrow.Second, "00:00:00"},
		{3723, arrow.Second, "01:02:03"},
		{3723004, arrow.Millisecond, "01:02:03.004"},
		{86399_999999, arrow.Microsecond, "23:59:59.999999"},
		{1, arrow.Nanosecond, "00:00:00.000000001"},
		{86400, arrow.Second, "86400s"}, // outside the day
		{-5, arrow.Millisecond, "-5ms"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, formatTime(c.v, c.unit), "%d %s", c.v, c.unit)
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"table": Table, "JSON": JSON, " csv ": CSV, "": Table} {
		got, err := ParseFormat(in)
		require.NoError(t, err)
		assert.Equal(t, want, got)
		if in != "" {
			assert.Equal(t, strings.ToLower(strings.TrimSpace(in)), got.String())
		}
	}
	_, err := ParseFormat("xml")
	assert.ErrorContains(t, err, `unknown format "xml"`)
}

// aggregate runs the engine on one record of the given columns.
func aggregate(t *testing.T, mem memory.Allocator, aggs agg.Set, cols ...arrow.Array) []engine.Result {
	t.Helper()
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: "c" + strconv.Itoa(i), Type: c.DataType(), Nullable: true}
	}
	rec := array.NewRecord(arrow.NewSchema(fields, nil), cols, int64(cols[0].Len()))
	defer rec.Release()
	eng, err := engine.New(engine.WithDevice(engine.DeviceCPU), engine.WithAllocator(mem))
	require.NoError(t, err)
	defer eng.Close()
	res, err := eng.AggregateRecord(context.Background(), rec, engine.Request{Aggs: aggs})
	require.NoError(t, err)
	return res
}

func build[T any](t *testing.T, mem memory.Allocator, dt arrow.DataType, vals []T, valid []bool) arrow.Array {
	t.Helper()
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for i, v := range vals {
		if valid != nil && !valid[i] {
			b.AppendNull()
			continue
		}
		b.(interface{ Append(T) }).Append(v)
	}
	return b.NewArray()
}

func TestJSONContract(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	u64 := build(t, mem, arrow.PrimitiveTypes.Uint64, []uint64{math.MaxUint64, math.MaxUint64, 7}, nil)
	defer u64.Release()
	i64 := build(t, mem, arrow.PrimitiveTypes.Int64, []int64{math.MinInt64, math.MinInt64, 0}, []bool{true, true, false})
	defer i64.Release()
	f64 := build(t, mem, arrow.PrimitiveTypes.Float64, []float64{1.5, math.NaN(), math.Inf(1)}, nil)
	defer f64.Release()
	empty := build(t, mem, arrow.PrimitiveTypes.Float64, []float64{0, 0, 0}, []bool{false, false, false})
	defer empty.Release()
	str := build(t, mem, arrow.BinaryTypes.String, []string{"b<&>", "a\"q\"", "\u00e9"}, nil)
	defer str.Release()
	flag := build(t, mem, arrow.FixedWidthTypes.Boolean, []bool{true, false, true}, nil)
	defer flag.Release()
	dur := build(t, mem, arrow.FixedWidthTypes.Duration_ms, []arrow.Duration{1500, -2, 0}, nil)
	defer dur.Release()

	res := aggregate(t, mem, agg.Default, u64, i64, f64, empty, str, flag, dur)
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, JSON, Report{Rows: 3, Files: 1, Columns: res}))
	out := buf.String()
	require.True(t, json.Valid(buf.Bytes()), out)

	var doc struct {
		Rows    json.Number                  `json:"rows"`
		Files   json.Number                  `json:"files"`
		Columns []map[string]json.RawMessage `json:"columns"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&doc))
	assert.Equal(t, "3", doc.Rows.String())
	assert.Equal(t, "1", doc.Files.String())
	require.Len(t, doc.Columns, 7)
	get := func(col int, key string) string { return string(doc.Columns[col][key]) }
	for _, c := range doc.Columns {
		assert.Len(t, c, 8, "every column has the eight keys")
	}

	// exact integers beyond 64 bits
	assert.Equal(t, "36893488147419103237", get(0, "sum")) // 2*(2^64-1)+7
	assert.Equal(t, "7", get(0, "min"))
	assert.Equal(t, "18446744073709551615", get(0, "max"))
	assert.Equal(t, "-18446744073709551616", get(1, "sum"))
	assert.Equal(t, "1", get(1, "null_count"))
	// floats: NaN wins the sum, min/max skip it
	assert.Equal(t, `"NaN"`, get(2, "sum"))
	assert.Equal(t, `1.5`, get(2, "min"))
	assert.Equal(t, `"Inf"`, get(2, "max"))
	// no valid values: null
	for _, k := range []string{"sum", "min", "max", "mean"} {
		assert.Equal(t, "null", get(3, k), k)
	}
	assert.Equal(t, "0", get(3, "count"))
	// strings: not HTML-escaped, sum and mean do not apply
	assert.Equal(t, `"a\"q\""`, get(4, "min"))
	assert.Equal(t, `"é"`, get(4, "max"))
	assert.Equal(t, "null", get(4, "sum"))
	assert.Equal(t, "null", get(4, "mean"))
	// booleans: sum is the number of true values
	assert.Equal(t, "2", get(5, "sum"))
	assert.Equal(t, "false", get(5, "min"))
	assert.Equal(t, "true", get(5, "max"))
	// durations with their unit; no mean
	assert.Equal(t, `"1498ms"`, get(6, "sum"))
	assert.Equal(t, `"-2ms"`, get(6, "min"))
	assert.Equal(t, "null", get(6, "mean"))
}

func TestAggregatesNotRequestedAreNull(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	col := build(t, mem, arrow.PrimitiveTypes.Int32, []int32{3, 1, 2}, nil)
	defer col.Release()
	res := aggregate(t, mem, agg.Sum|agg.Max, col)

	var js, cs, tb bytes.Buffer
	r := Report{Rows: 3, Files: 1, Aggs: agg.Sum | agg.Max, Columns: res}
	require.NoError(t, Write(&js, JSON, r))
	assert.Contains(t, js.String(), `{"name": "c0", "type": "int32", "count": null, "null_count": null, "sum": 6, "min": null, "max": 3, "mean": null}`)

	require.NoError(t, Write(&cs, CSV, r))
	recs, err := csv.NewReader(&cs).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, [][]string{
		{"name", "type", "count", "null_count", "sum", "min", "max", "mean"},
		{"c0", "int32", "", "", "6", "", "3", ""},
	}, recs)

	require.NoError(t, Write(&tb, Table, r))
	assert.Equal(t, "column  type   sum  max\n------  -----  ---  ---\nc0      int32    6    3\n3 rows, 1 file\n", tb.String())
}

func TestTableAlignsAndCuts(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	long := strings.Repeat("x", 60)
	col := build(t, mem, arrow.BinaryTypes.String, []string{"日本語", long, "a\nb"}, nil)
	defer col.Release()
	res := aggregate(t, mem, agg.Min|agg.Max|agg.Count, col)
	var tb bytes.Buffer
	require.NoError(t, Write(&tb, Table, Report{Rows: 3, Files: 2, Aggs: agg.Min | agg.Max | agg.Count, Columns: res}))
	lines := strings.Split(strings.TrimSuffix(tb.String(), "\n"), "\n")
	require.Len(t, lines, 4)
	assert.Equal(t, `c0      utf8      3  "a\nb"  日本語`, lines[2])
	assert.Equal(t, "column  type  count     min     max", lines[0])
	assert.Equal(t, "3 rows, 2 files", lines[3])

	onlyLong := build(t, mem, arrow.BinaryTypes.String, []string{long}, nil)
	defer onlyLong.Release()
	res = aggregate(t, mem, agg.Max, onlyLong)
	tb.Reset()
	require.NoError(t, Write(&tb, Table, Report{Rows: 1, Files: 1, Aggs: agg.Max, Columns: res}))
	assert.Contains(t, tb.String(), strings.Repeat("x", maxCell-3)+"...\n")
	assert.NotContains(t, tb.String(), strings.Repeat("x", maxCell-2))
}

func TestCSVQuotes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	col := build(t, mem, arrow.BinaryTypes.String, []string{`"quoted", with comma`, "z"}, nil)
	defer col.Release()
	res := aggregate(t, mem, agg.Default, col)
	var cs bytes.Buffer
	require.NoError(t, Write(&cs, CSV, Report{Rows: 2, Files: 1, Columns: res}))
	assert.Equal(t, "name,type,count,null_count,sum,min,max,mean\nc0,utf8,2,0,,\"\"\"quoted\"\", with comma\",z,\n", cs.String())
}

func TestEmptyReport(t *testing.T) {
	var js bytes.Buffer
	require.NoError(t, Write(&js, JSON, Report{Rows: 0, Files: 1}))
	assert.Equal(t, "{\n  \"rows\": 0,\n  \"files\": 1,\n  \"columns\": []\n}\n", js.String())
	assert.True(t, json.Valid(js.Bytes()))
}

func TestUnaggregatedColumnIsAnError(t *testing.T) {
	var buf bytes.Buffer
	err := Write(&buf, JSON, Report{Columns: []engine.Result{{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int8), Err: assert.AnError}}})
	assert.ErrorContains(t, err, `column "l" was not aggregated`)
	assert.Zero(t, buf.Len(), "nothing is written on error")
}
