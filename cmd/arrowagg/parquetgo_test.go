package main

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/brotli"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/lz4"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/uncompressed"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Files written by github.com/parquet-go/parquet-go, a Parquet writer of
// its own (not Arrow's): every encoding the format allows for each
// physical type, with every codec, in data pages v1 and v2, checked
// against the data the test generated (exact: math/big for the integer and
// decimal sums; the floats are integers over a power of two whose sums are
// exact in float64, which the oracle checks).

// pgRows is the rows of each file, in row groups of pgGroup rows and pages
// of about pgPage bytes (several a chunk).
const (
	pgRows  = 1500
	pgGroup = 600
	pgPage  = 1024
)

// pgColumn is a column of the files: its leaf (before its encoding), its
// values (a null is pq.NullValue()) and the answers they make.
type pgColumn struct {
	name   string
	node   pq.Node
	values []pq.Value
	want   writerWant
	// refused are the encodings of the column that arrowagg refuses, and
	// what its message says.
	refused map[string]string
}

// The encodings the format allows, by physical type.
var (
	pgIntEncodings   = []encoding.Encoding{&pq.Plain, &pq.RLEDictionary, &pq.DeltaBinaryPacked, &pq.ByteStreamSplit}
	pgFloatEncodings = []encoding.Encoding{&pq.Plain, &pq.RLEDictionary, &pq.ByteStreamSplit}
	pgBytesEncodings = []encoding.Encoding{&pq.Plain, &pq.RLEDictionary, &pq.DeltaLengthByteArray, &pq.DeltaByteArray}
	pgFixedEncodings = []encoding.Encoding{&pq.Plain, &pq.RLEDictionary, &pq.DeltaByteArray, &pq.ByteStreamSplit}
	pgBoolEncodings  = []encoding.Encoding{&pq.Plain, &pq.RLE}
)

// intAnswers accumulates the answers of an integer-valued column: the
// count, nulls, exact sum, min and max, printed by show.
type intAnswers struct {
	count, nulls int
	sum, lo, hi  *big.Int
}

func (a *intAnswers) add(v *big.Int) {
	if a.sum == nil {
		a.sum = new(big.Int)
	}
	a.count++
	a.sum.Add(a.sum, v)
	if a.lo == nil || v.Cmp(a.lo) < 0 {
		a.lo = new(big.Int).Set(v)
	}
	if a.hi == nil || v.Cmp(a.hi) > 0 {
		a.hi = new(big.Int).Set(v)
	}
}

// want is the answers: sum only where withSum (dates and timestamps have
// none), values printed by show.
func (a *intAnswers) want(name string, withSum bool, show func(*big.Int) string) writerWant {
	w := writerWant{Name: name, Count: strconv.Itoa(a.count), NullCount: strconv.Itoa(a.nulls)}
	str := func(s string) *string { return &s }
	if a.count > 0 {
		w.Min, w.Max = str(show(a.lo)), str(show(a.hi))
		if withSum {
			w.Sum = str(show(a.sum))
		}
	}
	return w
}

// decimalString prints unscaled / 10^scale in plain notation with scale
// digits after the point.
func decimalString(unscaled *big.Int, scale int) string {
	s := new(big.Int).Abs(unscaled).String()
	if len(s) <= scale {
		s = strings.Repeat("0", scale-len(s)+1) + s
	}
	s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	if unscaled.Sign() < 0 {
		s = "-" + s
	}
	return s
}

// fixedBytes is v as size bytes of big-endian two's complement.
func fixedBytes(v *big.Int, size int) []byte {
	m := new(big.Int).Lsh(big.NewInt(1), uint(8*size))
	u := new(big.Int).Set(v)
	if u.Sign() < 0 {
		u.Add(u, m)
	}
	return u.FillBytes(make([]byte, size))
}

// pgColumns generates the columns' values and answers: each with about
// 10% nulls (none in rows 0 to 2, where the integers have their type's
// bounds), one of them null throughout.
func pgColumns(t *testing.T, seed uint64) []pgColumn {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	null := func() bool { return r.IntN(10) == 0 }
	var cols []pgColumn
	ints := func(name string, node pq.Node, withSum bool, gen func(i int) *big.Int, value func(*big.Int) pq.Value, show func(*big.Int) string) {
		var a intAnswers
		vals := make([]pq.Value, pgRows)
		for i := range vals {
			if i > 2 && null() {
				a.nulls++
				continue
			}
			v := gen(i)
			a.add(v)
			vals[i] = value(v)
		}
		cols = append(cols, pgColumn{name: name, node: node, values: vals, want: a.want(name, withSum, show)})
	}
	// extremes puts the type's bounds in rows 1 and 2.
	extremes := func(lo, hi *big.Int, gen func() *big.Int) func(int) *big.Int {
		return func(i int) *big.Int {
			switch i {
			case 1:
				return lo
			case 2:
				return hi
			}
			return gen()
		}
	}
	i32 := func(v *big.Int) pq.Value { return pq.Int32Value(int32(v.Int64())) }
	i64 := func(v *big.Int) pq.Value { return pq.Int64Value(v.Int64()) }
	dec := func(scale int) func(*big.Int) string {
		return func(v *big.Int) string { return decimalString(v, scale) }
	}
	ints("int32", pq.Int(32), true, extremes(big.NewInt(math.MinInt32), big.NewInt(math.MaxInt32),
		func() *big.Int { return big.NewInt(int64(int32(r.Uint32()))) }), i32, (*big.Int).String)
	ints("int64", pq.Int(64), true, extremes(big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64),
		func() *big.Int { return big.NewInt(int64(r.Uint64())) }), i64, (*big.Int).String)
	ints("uint64", pq.Uint(64), true, extremes(new(big.Int), new(big.Int).SetUint64(math.MaxUint64),
		func() *big.Int { return new(big.Int).SetUint64(r.Uint64()) }),
		func(v *big.Int) pq.Value { return pq.Int64Value(int64(v.Uint64())) }, (*big.Int).String)
	cols = append(cols, pgColumn{name: "int64_all_null", node: pq.Int(64), values: make([]pq.Value, pgRows),
		want: writerWant{Name: "int64_all_null", Count: "0", NullCount: strconv.Itoa(pgRows)}})
	ints("dec9", pq.Decimal(2, 9, pq.Int32Type), true,
		func(int) *big.Int { return big.NewInt(r.Int64N(2*999_999_999+1) - 999_999_999) }, i32, dec(2))
	ints("dec18", pq.Decimal(3, 18, pq.Int64Type), true,
		func(int) *big.Int { return big.NewInt(r.Int64N(2*999_999_999_999_999_999+1) - 999_999_999_999_999_999) }, i64, dec(3))
	ints("dec30", pq.Decimal(4, 30, pq.FixedLenByteArrayType(13)), true,
		func(int) *big.Int {
			v := new(big.Int).Lsh(big.NewInt(r.Int64N(1<<36)-1<<35), 60)
			return v.Add(v, new(big.Int).SetUint64(r.Uint64()>>4))
		},
		func(v *big.Int) pq.Value { return pq.FixedLenByteArrayValue(fixedBytes(v, 13)) }, dec(4))
	ints("date", pq.Date(), false, func(int) *big.Int { return big.NewInt(r.Int64N(100_001) - 50_000) }, i32,
		func(v *big.Int) string { return time.Unix(v.Int64()*86400, 0).UTC().Format("2006-01-02") })
	ints("ts_us", pq.Timestamp(pq.Microsecond), false, func(int) *big.Int { return big.NewInt(r.Int64N(6e16) - 3e16) }, i64,
		func(v *big.Int) string { return time.UnixMicro(v.Int64()).UTC().Format(time.RFC3339Nano) })
	ints("ts_ns", pq.Timestamp(pq.Nanosecond), false, func(int) *big.Int { return big.NewInt(int64(r.Uint64())) }, i64,
		func(v *big.Int) string { return time.Unix(0, v.Int64()).UTC().Format(time.RFC3339Nano) })

	floats := func(name string, node pq.Node, bits int, gen func() float64, value func(float64) pq.Value) {
		var count, nulls int
		sum := new(big.Float).SetPrec(1000)
		lo, hi := math.Inf(1), math.Inf(-1)
		vals := make([]pq.Value, pgRows)
		for i := range vals {
			if null() {
				nulls++
				continue
			}
			v := gen()
			count++
			sum.Add(sum, big.NewFloat(v))
			lo, hi = min(lo, v), max(hi, v)
			vals[i] = value(v)
		}
		s, acc := sum.Float64()
		require.Equal(t, big.Exact, acc, "%s: the sum of the values is exact in float64", name)
		show := func(f float64, bits int) *string { x := strconv.FormatFloat(f, 'g', -1, bits); return &x }
		cols = append(cols, pgColumn{name: name, node: node, values: vals, want: writerWant{Name: name, float: true,
			Count: strconv.Itoa(count), NullCount: strconv.Itoa(nulls), Sum: show(s, 64), Min: show(lo, bits), Max: show(hi, bits)}})
	}
	// Integers of 24 and 44 bits over a power of two: exact in float32 and
	// float64, and their sums of pgRows exact in float64.
	floats("float", pq.Leaf(pq.FloatType), 32, func() float64 { return float64(r.Int64N(1<<24)-1<<23) / 64 },
		func(f float64) pq.Value { return pq.FloatValue(float32(f)) })
	floats("double", pq.Leaf(pq.DoubleType), 64, func() float64 { return float64(r.Int64N(1<<44)-1<<43) / 1024 }, pq.DoubleValue)

	// Strings of 0 to 17 bytes, many sharing prefixes (DELTA_BYTE_ARRAY),
	// some not ASCII.
	{
		var count, nulls int
		var lo, hi *string
		vals := make([]pq.Value, pgRows)
		prefixes := []string{"", "apple", "apricot", "banana", "é"}
		const letters = "abcxyzü"
		for i := range vals {
			if null() {
				nulls++
				continue
			}
			var b strings.Builder
			b.WriteString(prefixes[r.IntN(len(prefixes))])
			for n := r.IntN(6); n > 0; n-- {
				b.WriteString(string([]rune(letters)[r.IntN(7)]))
			}
			s := b.String()
			count++
			if lo == nil || s < *lo {
				lo = &s
			}
			if hi == nil || s > *hi {
				hi = &s
			}
			vals[i] = pq.ByteArrayValue([]byte(s))
		}
		cols = append(cols, pgColumn{name: "string", node: pq.String(), values: vals,
			want: writerWant{Name: "string", Count: strconv.Itoa(count), NullCount: strconv.Itoa(nulls), Min: lo, Max: hi}})
	}
	{
		var count, nulls, trues int
		vals := make([]pq.Value, pgRows)
		for i := range vals {
			if null() {
				nulls++
				continue
			}
			b := r.IntN(3) == 0
			count++
			if b {
				trues++
			}
			vals[i] = pq.BooleanValue(b)
		}
		f, tr, sum := "false", "true", strconv.Itoa(trues)
		cols = append(cols, pgColumn{name: "bool", node: pq.Leaf(pq.BooleanType), values: vals,
			want: writerWant{Name: "bool", Count: strconv.Itoa(count), NullCount: strconv.Itoa(nulls), Sum: &sum, Min: &f, Max: &tr}})
	}
	// arrow-go v17 has no decoder for DELTA_BYTE_ARRAY pages of
	// FIXED_LEN_BYTE_ARRAY values (nor has the page path).
	for i, c := range cols {
		if c.name == "dec30" {
			cols[i].refused = map[string]string{"DELTA_BYTE_ARRAY": "not implemented: DELTA_BYTE_ARRAY encoding of a FIXED_LEN_BYTE_ARRAY column (arrow-go v17 has no decoder for it)"}
		}
	}
	return cols
}

// pgEncodings are the encodings the format allows for a physical type.
func pgEncodings(k pq.Kind) []encoding.Encoding {
	switch k {
	case pq.Int32, pq.Int64:
		return pgIntEncodings
	case pq.Float, pq.Double:
		return pgFloatEncodings
	case pq.ByteArray:
		return pgBytesEncodings
	case pq.FixedLenByteArray:
		return pgFixedEncodings
	case pq.Boolean:
		return pgBoolEncodings
	}
	panic(fmt.Sprintf("no encodings for %v", k))
}

// isDelta: the DELTA_* encodings, which arrow-go decodes for the page
// path (and leaks a little doing it: deltaLeak).
func isDelta(e encoding.Encoding) bool {
	switch e.Encoding().String() {
	case "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY":
		return true
	}
	return false
}

// writePG writes each column of cols once in each encoding its type
// allows for which keep is true, as optional leaves named
// column_ENCODING, with codec and data pages of version page, and returns
// what each leaf's answers must be.
func writePG(t *testing.T, path string, cols []pgColumn, keep func(*pgColumn, encoding.Encoding) bool, codec compress.Codec, page int) []writerWant {
	t.Helper()
	type leaf struct {
		col  *pgColumn
		name string
	}
	group := pq.Group{}
	var leaves []leaf
	for i := range cols {
		c := &cols[i]
		for _, e := range pgEncodings(c.node.Type().Kind()) {
			if !keep(c, e) {
				continue
			}
			name := c.name + "_" + e.Encoding().String()
			group[name] = pq.Optional(pq.Encoded(c.node, e))
			leaves = append(leaves, leaf{c, name})
		}
	}
	schema := pq.NewSchema("pg", group)
	idx := make([]int, len(leaves))
	for i, l := range leaves {
		lc, ok := schema.Lookup(l.name)
		require.True(t, ok, l.name)
		idx[i] = lc.ColumnIndex
	}
	rows := make([]pq.Row, pgRows)
	for r := range rows {
		row := make(pq.Row, len(leaves))
		for i, l := range leaves {
			v := l.col.values[r]
			if v.IsNull() {
				row[idx[i]] = pq.NullValue().Level(0, 0, idx[i])
			} else {
				row[idx[i]] = v.Level(0, 1, idx[i])
			}
		}
		rows[r] = row
	}
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	w := pq.NewWriter(f, schema, pq.Compression(codec), pq.DataPageVersion(page), pq.PageBufferSize(pgPage), pq.MaxRowsPerRowGroup(pgGroup))
	n, err := w.WriteRows(rows)
	require.NoError(t, err)
	require.Equal(t, pgRows, n)
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
	want := make([]writerWant, len(leaves))
	for i, l := range leaves {
		want[i] = l.col.want
		want[i].Name = l.name
	}
	return want
}

// TestParquetGoFiles reads the files parquet-go writes: each codec
// (UNCOMPRESSED, SNAPPY, GZIP, ZSTD, LZ4_RAW, BROTLI), data pages v1 and v2,
// and every encoding of every type (one file the DELTA_* encodings, one
// the others), answers checked against the data. The encodings arrowagg
// refuses for a column are each written alone, and the refusal checked.
func TestParquetGoFiles(t *testing.T) {
	cols := pgColumns(t, 1)
	dir := t.TempDir()
	// (LZ4_RAW at its fastest level: the others allocate large tables per
	// page, slow under the race detector.)
	codecs := []compress.Codec{&uncompressed.Codec{}, &snappy.Codec{}, &gzip.Codec{}, &zstd.Codec{}, &lz4.Codec{Level: lz4.Fastest}, &brotli.Codec{}}
	for _, codec := range codecs {
		for _, page := range []int{1, 2} {
			for _, delta := range []bool{false, true} {
				name := fmt.Sprintf("parquet-go-%s-v%d", strings.ToLower(codec.String()), page)
				leaks := ""
				if delta {
					name, leaks = name+"-delta", deltaLeak
				}
				t.Run(name, func(t *testing.T) {
					path := filepath.Join(dir, name+".parquet")
					want := writePG(t, path, cols, func(c *pgColumn, e encoding.Encoding) bool {
						return isDelta(e) == delta && c.refused[e.Encoding().String()] == ""
					}, codec, page)
					for _, aggs := range writerAggs {
						checkWriterFile(t, path, aggs, pgRows, want, leaks)
					}
				})
			}
			for _, c := range cols {
				for enc, msg := range c.refused {
					name := fmt.Sprintf("parquet-go-%s-v%d-%s_%s", strings.ToLower(codec.String()), page, c.name, enc)
					t.Run(name, func(t *testing.T) {
						path := filepath.Join(dir, name+".parquet")
						writePG(t, path, []pgColumn{c}, func(_ *pgColumn, e encoding.Encoding) bool { return e.Encoding().String() == enc }, codec, page)
						got := runIn(t, context.Background(), env{}, "--format", "json", "--device", "cpu", "--no-stats", path)
						require.Equal(t, 2, got.code, "%s: %s", name, got.stdout)
						require.Empty(t, got.stdout)
						assert.Contains(t, got.stderr, path)
						assert.Contains(t, got.stderr, fmt.Sprintf("column %q: page 0: %s", c.name+"_"+enc, msg))
					})
				}
			}
		}
	}
}
