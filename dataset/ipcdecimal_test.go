package dataset

import (
	"compress/gzip"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/arrow/scalar"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
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
		for _, ext := range []string{".arrow_file", ".stream"} {
			path := filepath.Join(dir, "generated_decimal"+bits+ext)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			_, sum := aggregateFile(t, mem, []string{path}, Options{}, agg.Default|agg.First|agg.Last)
			mem.AssertSize(t, 0)
			require.Len(t, sum.Results, len(want), path)
			for i, r := range sum.Results {
				f := doc.Schema.Fields[i]
				name := path + " " + f.Name
				nt, ok := r.Type.(*column.NarrowDecimalType)
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
