package dataset

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/scalar"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/internal/testdatagen"
)

// integrationJSON is what the Arrow integration JSON files say of flat
// columns: the schema's fields and, per batch, each column's validity and
// values (decimals as strings of their unscaled values).
type integrationJSON struct {
	Schema struct {
		Fields []struct {
			Name string
			Type struct {
				Name                       string
				Precision, Scale, BitWidth int32
			}
		}
	}
	Batches []struct {
		Columns []struct {
			Name     string
			Count    int
			Validity []int
			Data     []string `json:"DATA"`
		}
	}
}

// decimalOracle is what the JSON says a decimal column aggregates to.
type decimalOracle struct {
	count, nulls int64
	sum          *big.Int
	min, max     *big.Int
	first, last  *big.Int
}

func readIntegrationJSON(t *testing.T, path string) integrationJSON {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	z, err := gzip.NewReader(f)
	require.NoError(t, err)
	var doc integrationJSON
	require.NoError(t, json.NewDecoder(z).Decode(&doc))
	return doc
}

// The decimal32 and decimal64 files of the Arrow integration corpus (an
// IPC file and a stream each) answer what their JSON twins say: count,
// null_count, the exact sum (math/big over the JSON's unscaled values),
// min, max, first and last, as decimal128 of the column's precision and
// scale, their type being decimal32 or decimal64. Arrow-go v17 alone
// refuses them ("invalid decimal bitwidth").
func TestNarrowDecimalIPCCorpus(t *testing.T) {
	dir := filepath.Join(corpusDir, "arrow-testing", "data", "arrow-ipc-stream", "integration", "cpp-21.0.0")
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the conformance corpus is missing in CI: %v", err)
		}
		t.Skipf("no conformance corpus: %v", err)
	}
	for _, bits := range []string{"32", "64"} {
		doc := readIntegrationJSON(t, filepath.Join(dir, "generated_decimal"+bits+".json.gz"))
		require.NotEmpty(t, doc.Schema.Fields)
		want := make([]decimalOracle, len(doc.Schema.Fields))
		for i := range want {
			want[i].sum = new(big.Int)
			require.Equal(t, "decimal", doc.Schema.Fields[i].Type.Name)
			require.Equal(t, bits, strconv.Itoa(int(doc.Schema.Fields[i].Type.BitWidth)))
		}
		for _, b := range doc.Batches {
			for i, c := range b.Columns {
				o := &want[i]
				for k := 0; k < c.Count; k++ {
					if c.Validity[k] == 0 {
						o.nulls++
						continue
					}
					v, ok := new(big.Int).SetString(c.Data[k], 10)
					require.True(t, ok, c.Data[k])
					o.count++
					o.sum.Add(o.sum, v)
					if o.min == nil || v.Cmp(o.min) < 0 {
						o.min = v
					}
					if o.max == nil || v.Cmp(o.max) > 0 {
						o.max = v
					}
					if o.first == nil {
						o.first = v
					}
					o.last = v
				}
			}
		}
		// The file is read in place: its schema lays out.
		srcs, err := Expand([]string{filepath.Join(dir, "generated_decimal"+bits+".arrow_file")})
		require.NoError(t, err)
		sc, err := probeIPCFile(context.Background(), srcs[0])
		require.NoError(t, err)
		f, err := srcs[0].open()
		require.NoError(t, err)
		footer, err := readIPCFooter(f, srcs[0].Size)
		f.Close()
		require.NoError(t, err)
		_, err = ipcLayout(sc, footer.schema, map[int64]arrow.DataType{})
		require.NoError(t, err, "in place")
		for _, ext := range []string{".arrow_file", ".stream"} {
			path := filepath.Join(dir, "generated_decimal"+bits+ext)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			_, sum := aggregateFile(t, mem, []string{path}, Options{}, agg.Default|agg.First|agg.Last)
			mem.AssertSize(t, 0)
			require.Len(t, sum.Results, len(want), path)
			for i, r := range sum.Results {
				f := doc.Schema.Fields[i]
				name := path + " " + f.Name
				nt, ok := r.Type.(*arrow17.NarrowDecimalType)
				require.True(t, ok, "%s: type %s", name, r.Type)
				assert.Equal(t, "decimal"+bits, strings.SplitN(nt.String(), "(", 2)[0], name)
				assert.Equal(t, f.Type.Precision, nt.Precision, name)
				assert.Equal(t, f.Type.Scale, nt.Scale, name)
				o := want[i]
				assert.Equal(t, o.count, r.Count, name)
				assert.Equal(t, o.nulls, r.NullCount, name)
				if o.count == 0 {
					assert.False(t, r.Min.IsValid(), name)
					continue
				}
				assert.Equal(t, o.sum.String(), r.SumExact.String(), name)
				for _, c := range []struct {
					what string
					s    scalar.Scalar
					want *big.Int
				}{{"min", r.Min, o.min}, {"max", r.Max, o.max}, {"first", r.First, o.first}, {"last", r.Last, o.last}} {
					d, ok := c.s.(*scalar.Decimal128)
					require.True(t, ok, "%s %s: %T", name, c.what, c.s)
					assert.Equal(t, c.want.String(), d.Value.BigInt().String(), "%s %s", name, c.what)
					assert.Equal(t, nt.Decimal128(), d.Type, "%s %s", name, c.what)
				}
				sumScale := r.Sum.(*scalar.Decimal128)
				assert.Equal(t, o.sum.String(), sumScale.Value.BigInt().String(), name)
			}
		}
	}
}

// narrowWant is what the narrow files' columns aggregate to, from the
// values testdatagen writes: count, null_count, and min, max, first and last
// as the oracle's strings (decimals unscaled).
func narrowWant() map[string][6]string {
	out := map[string][6]string{}
	bytesCol := func(name string, vals []string) {
		var n, nulls int
		var mn, mx, first, last string
		for _, v := range vals {
			if v == "" {
				nulls++
				continue
			}
			if n == 0 || v < mn {
				mn = v
			}
			if n == 0 || v > mx {
				mx = v
			}
			if n == 0 {
				first = v
			}
			last = v
			n++
		}
		out[name] = [6]string{strconv.Itoa(n), strconv.Itoa(nulls), mn, mx, first, last}
	}
	bytesCol("code", testdatagen.NarrowCodes)
	bytesCol("uuid", testdatagen.NarrowUUIDs)
	decCol := func(name string, vals []int64) {
		var n, nulls int
		var mn, mx, first, last int64
		for _, v := range vals {
			if v == testdatagen.NarrowDecNull {
				nulls++
				continue
			}
			if n == 0 || v < mn {
				mn = v
			}
			if n == 0 || v > mx {
				mx = v
			}
			if n == 0 {
				first = v
			}
			last = v
			n++
		}
		f := func(x int64) string { return strconv.FormatInt(x, 10) }
		out[name] = [6]string{strconv.Itoa(n), strconv.Itoa(nulls), f(mn), f(mx), f(first), f(last)}
	}
	decCol("d32", testdatagen.NarrowDec32)
	decCol("d64", testdatagen.NarrowDec64)
	// half: 1.5, null, -2, NaN, -0, +0, 65504, 2^-24 (NaN skipped by min
	// and max).
	out["half"] = [6]string{"7", "1", "-2", "65504", "1.5", strconv.FormatFloat(math.Ldexp(1, -24), 'g', -1, 64)}
	return out
}

// narrowString is a min, max, first or last in narrowWant's terms.
func narrowString(t *testing.T, s scalar.Scalar) string {
	switch s := s.(type) {
	case *scalar.Float16:
		return strconv.FormatFloat(column.HalfToFloat64(s.Value.Uint16()), 'g', -1, 64)
	case *scalar.FixedSizeBinary:
		return string(s.Value.Bytes())
	case *scalar.Decimal128:
		return s.Value.BigInt().String()
	}
	t.Fatalf("unexpected scalar %T", s)
	return ""
}

// The small files of testdatagen.WriteNarrow: float16 and fixed_size_binary
// in an IPC file and in Parquet (FLOAT16, plain FIXED_LEN_BYTE_ARRAY, UUID),
// decimal32 and decimal64 in an IPC stream as Arrow C++ writes it and in
// Parquet as Arrow C++ 18 writes them (INT32 and INT64 DECIMAL columns, the
// stored Arrow schema saying decimal32 and decimal64), read from the pages
// and through pqarrow, answer what their values say, with the types they
// were written as, every allocation freed.
func TestNarrowFiles(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, testdatagen.WriteNarrow(dir))
	want := narrowWant()
	types := map[string]string{"half": "float16", "code": "fixed_size_binary[3]", "uuid": "fixed_size_binary[16]",
		"d32": "decimal32(7, 2)", "d64": "decimal64(15, 3)"}
	sums := map[string]string{"d32": "-87653", "d64": "123456830"}
	for _, c := range []struct {
		file        string
		arrowDecode bool
		cols        int
	}{{"narrow.parquet", false, 5}, {"narrow.parquet", true, 5}, {"narrow.arrow", false, 2}, {"narrow.arrows", false, 2}} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		_, sum := aggregateFile(t, mem, []string{filepath.Join(dir, c.file)}, Options{ArrowDecode: c.arrowDecode}, agg.Default|agg.First|agg.Last)
		mem.AssertSize(t, 0)
		require.Len(t, sum.Results, c.cols, c.file)
		for _, r := range sum.Results {
			name := fmt.Sprintf("%s (arrow decode %v) %s", c.file, c.arrowDecode, r.Name)
			w := want[r.Name]
			assert.Equal(t, types[r.Name], r.Type.String(), name)
			assert.Equal(t, w[0], strconv.FormatInt(r.Count, 10), name)
			assert.Equal(t, w[1], strconv.FormatInt(r.NullCount, 10), name)
			for i, s := range []scalar.Scalar{r.Min, r.Max, r.First, r.Last} {
				assert.Equal(t, w[2+i], narrowString(t, s), "%s: %s", name, [...]string{"min", "max", "first", "last"}[i])
			}
			switch r.Name {
			case "half":
				assert.True(t, math.IsNaN(r.Sum.(*scalar.Float64).Value), name)
			case "d32", "d64":
				assert.Equal(t, sums[r.Name], r.SumExact.String(), name)
			default:
				assert.Nil(t, r.Sum, name)
			}
		}
	}
	// The decimals of the Parquet file are read from the pages as the
	// decimal32 and decimal64 values they are.
	srcs, err := Expand([]string{filepath.Join(dir, "narrow.parquet")})
	require.NoError(t, err)
	sc, pqf, err := probeParquet(srcs[0])
	require.NoError(t, err)
	for col, name := range []string{"half", "code", "uuid", "d32", "d64"} {
		require.Equal(t, name, sc.Field(col).Name)
		pl, err := pageLeafOf(pqf.meta, col, sc.Field(col).Type)
		if name == "d32" || name == "d64" {
			require.NoError(t, err, name)
			assert.Equal(t, map[string]column.Kind{"d32": column.Decimal32, "d64": column.Decimal64}[name], pl.kind)
		} else {
			assert.ErrorIs(t, err, errNotPaged, "%s: PLAIN FIXED_LEN_BYTE_ARRAY pages go through pqarrow", name)
		}
	}
}
