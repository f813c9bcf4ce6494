package dataset

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The integration JSON of arrow-testing (X.json.gz beside X.arrow_file and
// X.stream): the parts of the schema and the columns that say which
// elements are null.
type jsonField struct {
	Name string
	Type struct {
		Name string
		Mode string
		IDs  []int `json:"typeIds"`
	}
	Children []jsonField
}

type jsonColumn struct {
	Count    int
	Validity []int           `json:"VALIDITY"`
	TypeID   []int           `json:"TYPE_ID"`
	Offset   json.RawMessage `json:"OFFSET"` // (strings for 64-bit offsets)
	Children []jsonColumn
}

type jsonFile struct {
	Schema  struct{ Fields []jsonField }
	Batches []struct {
		Count   int
		Columns []jsonColumn
	}
}

// jsonNull says whether element i of column c (of field f) is null, from
// the JSON alone: a union's element where the child value it selects is
// (sparse: element i, dense: element OFFSET[i]), a null column's always,
// another's where its VALIDITY is 0.
func jsonNull(t *testing.T, f jsonField, c jsonColumn, i int) bool {
	switch f.Type.Name {
	case "null":
		return true
	case "union":
		k := -1
		for j, id := range f.Type.IDs {
			if id == c.TypeID[i] {
				k = j
			}
		}
		require.GreaterOrEqual(t, k, 0, "type id %d", c.TypeID[i])
		j := i
		if f.Type.Mode == "DENSE" {
			var offsets []int
			require.NoError(t, json.Unmarshal(c.Offset, &offsets))
			j = offsets[i]
		}
		return jsonNull(t, f.Children[k], c.Children[k], j)
	}
	return c.Validity != nil && c.Validity[i] == 0
}

// jsonCounts are the count and null_count of every leaf of the JSON file
// at path, in schema order (a struct's fields dotted, null where the struct
// is), over all its batches.
func jsonCounts(t *testing.T, path string) [][2]int64 {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	require.NoError(t, err)
	var doc jsonFile
	require.NoError(t, json.NewDecoder(zr).Decode(&doc))
	var out [][2]int64
	for b, batch := range doc.Batches {
		k := 0
		var walk func(fields []jsonField, cols []jsonColumn, parentNull func(int) bool)
		walk = func(fields []jsonField, cols []jsonColumn, parentNull func(int) bool) {
			for i, f := range fields {
				c := cols[i]
				null := func(r int) bool { return parentNull(r) || jsonNull(t, f, c, r) }
				if f.Type.Name == "struct" {
					walk(f.Children, c.Children, null)
					continue
				}
				if b == 0 {
					out = append(out, [2]int64{})
				}
				for r := 0; r < batch.Count; r++ {
					if null(r) {
						out[k][1]++
					} else {
						out[k][0]++
					}
				}
				k++
			}
		}
		walk(doc.Schema.Fields, batch.Columns, func(int) bool { return false })
	}
	return out
}

// integrationFiles returns the IPC files and streams of arrow-testing's
// integration folders named base, skipping the test where the corpus is
// missing (failing in CI).
func integrationFiles(t *testing.T, base string) []string {
	t.Helper()
	root := filepath.Join(corpusDir, "arrow-testing", "data", "arrow-ipc-stream", "integration")
	if _, err := os.Stat(root); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the conformance corpus is missing in CI: %v", err)
		}
		t.Skipf("no conformance corpus: %v", err)
	}
	var out []string
	for _, ext := range []string{".arrow_file", ".stream"} {
		files, err := filepath.Glob(filepath.Join(root, "*", base+ext))
		require.NoError(t, err)
		out = append(out, files...)
	}
	return out
}

// The union and repeated-name files of the integration corpus, of every
// writer and byte order, files read in place (unions of metadata V4, with
// a validity buffer, and V5, without) or through Arrow's reader (the other
// byte order), and streams: every column aggregated, the counts those of
// the JSON twin.
func TestIntegrationUnionsAndRepeatedNames(t *testing.T) {
	names := map[string][][]string{ // the leaves' names, by writer
		"generated_union":                {{"sparse_1", "dense_1", "sparse_2", "dense_2"}, {"sparse", "dense", "sparse_1", "dense_1"}},
		"generated_duplicate_fieldnames": {{"ints", "ints_1", "struct.", "struct._1"}},
	}
	for base, want := range names {
		files := integrationFiles(t, base)
		require.GreaterOrEqual(t, len(files), 6, base)
		for _, path := range files {
			name, _ := filepath.Rel(filepath.Join(corpusDir, "arrow-testing"), path)
			counts := jsonCounts(t, strings.TrimSuffix(strings.TrimSuffix(path, ".arrow_file"), ".stream")+".json.gz")
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			sum, sel, err := aggregatePaths(context.Background(), t, mem, []string{path}, nil, Options{})
			require.NoError(t, err, name)
			assert.Empty(t, sel.Skipped, name)
			require.Len(t, sum.Results, len(counts), name)
			got := make([]string, len(sum.Results))
			for i, r := range sum.Results {
				require.NoError(t, r.Err, "%s %s", name, r.Name)
				got[i] = r.Name
				assert.Equal(t, counts[i], [2]int64{r.Count, r.NullCount}, "%s %s", name, r.Name)
			}
			assert.Contains(t, want, got, name)
			// The file and its stream twin: one table, their columns
			// matched by name.
			twin := strings.TrimSuffix(path, ".stream") + ".arrow_file"
			if strings.HasSuffix(path, ".arrow_file") {
				twin = strings.TrimSuffix(path, ".arrow_file") + ".stream"
			}
			sum, _, err = aggregatePaths(context.Background(), t, mem, []string{path, twin}, nil, Options{})
			require.NoError(t, err, name)
			require.Len(t, sum.Results, len(counts), name)
			for i, r := range sum.Results {
				assert.Equal(t, got[i], r.Name, name)
				assert.Equal(t, [2]int64{2 * counts[i][0], 2 * counts[i][1]}, [2]int64{r.Count, r.NullCount}, "%s and its twin: %s", name, r.Name)
			}
			// A renamed column is selected by its name.
			sum, _, err = aggregatePaths(context.Background(), t, mem, []string{path}, got[len(got)-1:], Options{})
			require.NoError(t, err, name)
			require.Len(t, sum.Results, 1, name)
			assert.Equal(t, counts[len(counts)-1], [2]int64{sum.Results[0].Count, sum.Results[0].NullCount}, "%s -c %s", name, got[len(got)-1])
			mem.AssertSize(t, 0)
			if strings.HasSuffix(path, ".arrow_file") { // in place, but in the other byte order
				if strings.Contains(path, "bigendian") {
					assert.ErrorIs(t, inPlace(t, path), errNotInPlace, name)
				} else {
					assert.NoError(t, inPlace(t, path), name)
				}
			}
		}
	}
}

// A union whose type code names no child, or whose offset lies outside its
// child, is corrupt: an error naming the file, the column and the element,
// never a panic, from the file (read in place) and the stream.
func TestIPCUnionCorrupt(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	// Type codes 81 and 82 ("QR"): a pattern found once in the file.
	f1, _, err := array.FromJSON(memory.DefaultAllocator, arrow.PrimitiveTypes.Int32, strings.NewReader(`[1, null, 3, 4, 5, 6, 7, 8]`))
	require.NoError(t, err)
	defer f1.Release()
	f2, _, err := array.FromJSON(memory.DefaultAllocator, arrow.PrimitiveTypes.Int8, strings.NewReader(`[1, 2, 3, 4, 5, 6, 7, 8]`))
	require.NoError(t, err)
	defer f2.Release()
	codes := []int8{81, 82, 81, 81, 82, 82, 81, 82}
	fields := []arrow.Field{{Name: "a", Type: f1.DataType(), Nullable: true}, {Name: "b", Type: f2.DataType(), Nullable: true}}
	sparse := array.NewSparseUnion(arrow.SparseUnionOf(fields, []arrow.UnionTypeCode{81, 82}), 8, []arrow.Array{f1, f2},
		memory.NewBufferBytes(arrow.Int8Traits.CastToBytes(codes)), 0)
	defer sparse.Release()
	offsets := []int32{0, 0, 1, 2, 1, 2, 3, 3}
	dense := array.NewDenseUnion(arrow.DenseUnionOf(fields, []arrow.UnionTypeCode{81, 82}), 8, []arrow.Array{f1, f2},
		memory.NewBufferBytes(arrow.Int8Traits.CastToBytes(codes)), memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets)), 0)
	defer dense.Release()
	for _, c := range []struct {
		name     string
		arr      arrow.Array
		from, to []byte
		msg      string
	}{
		{"sparse", sparse, arrow.Int8Traits.CastToBytes(codes), arrow.Int8Traits.CastToBytes([]int8{81, 82, 81, 9, 82, 82, 81, 82}),
			`column "u": corrupt Arrow IPC stream: sparse_union element 3 has type code 9, which is none of its type's [81 82]`},
		{"dense", dense, arrow.Int32Traits.CastToBytes(offsets), arrow.Int32Traits.CastToBytes([]int32{0, 0, 1, 2, 1, 2, 3, 300}),
			`column "u": corrupt Arrow IPC stream: dense_union element 7 selects value 300 of child "b" (type code 82), which has 8 values`},
	} {
		schema := arrow.NewSchema([]arrow.Field{{Name: "u", Type: c.arr.DataType(), Nullable: true}}, nil)
		rec := array.NewRecord(schema, []arrow.Array{c.arr}, 8)
		for _, file := range []bool{true, false} {
			path := filepath.Join(t.TempDir(), c.name+".arrow")
			writeIPCAs(t, path, rec, file)
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, 1, bytes.Count(b, c.from), "%s: the buffer is found once", c.name)
			require.NoError(t, os.WriteFile(path, bytes.Replace(b, c.from, c.to, 1), 0o644))
			_, _, err = aggregatePaths(context.Background(), t, mem, []string{path}, nil, Options{})
			require.Error(t, err, c.name)
			assert.Contains(t, err.Error(), path, c.name)
			want := c.msg // (a file's bytes: a corrupt file, not stream)
			if file {
				want = strings.Replace(want, "Arrow IPC stream", "Arrow IPC file", 1)
			}
			assert.Contains(t, err.Error(), want, c.name)
		}
		rec.Release()
	}
}

// A column longer than its batch is corrupt, from the file and the stream
// (Arrow's reader refuses only a shorter one): an error naming the column,
// not an aggregation of the length it declares.
func TestIPCColumnLongerThanBatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	x, _, err := array.FromJSON(memory.DefaultAllocator, arrow.PrimitiveTypes.Int32, strings.NewReader(`[1, 2, 3, 4, 5]`))
	require.NoError(t, err)
	defer x.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: x.DataType()}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{x}, 2) // 5 values, 2 rows
	defer rec.Release()
	for _, file := range []bool{true, false} {
		path := filepath.Join(t.TempDir(), "long.arrow")
		writeIPCAs(t, path, rec, file)
		_, _, err := aggregatePaths(context.Background(), t, mem, []string{path}, nil, Options{})
		require.Error(t, err, "file %v", file)
		assert.Contains(t, err.Error(), path)
		assert.Contains(t, err.Error(), `column "x" has 5 values in a batch of 2 rows`, "file %v", file)
	}
}

// writeIPCAs writes rec to path as an Arrow IPC file (file) or stream.
func writeIPCAs(t *testing.T, path string, rec arrow.Record, file bool) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	if file {
		w, err := ipc.NewFileWriter(f, ipc.WithSchema(rec.Schema()))
		require.NoError(t, err)
		require.NoError(t, w.Write(rec))
		require.NoError(t, w.Close())
	} else {
		w := ipc.NewWriter(f, ipc.WithSchema(rec.Schema()))
		require.NoError(t, w.Write(rec))
		require.NoError(t, w.Close())
	}
	require.NoError(t, f.Close())
}

// The stream an IPC file holds is the file's bytes: its errors say the file
// is corrupt, and keep what they wrap.
func TestAsIPCFile(t *testing.T) {
	inner := errors.New("corrupt Arrow IPC stream: message 3 of type 9")
	err := asIPCFile(fmt.Errorf("record batch 2: %w", inner))
	assert.EqualError(t, err, "record batch 2: corrupt Arrow IPC file: message 3 of type 9")
	assert.ErrorIs(t, err, inner)
	other := errors.New("reading: unexpected EOF")
	assert.Same(t, other, asIPCFile(other))
	assert.NoError(t, asIPCFile(nil))
}

// Every stream of arrow-testing's integration corpus, read as a file (its
// messages walked in place where it can be, by the stream reader where not:
// the other byte order), gives what the stream reader gives it on standard
// input, to the last bit, or fails as it does.
func TestIntegrationStreamsInPlace(t *testing.T) {
	root := filepath.Join(corpusDir, "arrow-testing", "data", "arrow-ipc-stream", "integration")
	if _, err := os.Stat(root); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the conformance corpus is missing in CI: %v", err)
		}
		t.Skipf("no conformance corpus: %v", err)
	}
	files, err := filepath.Glob(filepath.Join(root, "*", "*.stream"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	walked := 0
	for _, path := range files {
		name, _ := filepath.Rel(root, path)
		want, werr := aggregateIPCReader(t, path, orderedAggs, 2)
		got, gerr := aggregateIPCWith(t, path, orderedAggs, 2, nil)
		if werr != nil {
			require.Error(t, gerr, name)
			assert.Equal(t, werr.Error(), strings.ReplaceAll(gerr.Error(), path+": ", "<stdin>: "), name)
			continue
		}
		require.NoError(t, gerr, name)
		assert.Equal(t, want, got, name)
		if inPlace(t, path) == nil {
			walked++
		}
	}
	t.Logf("%d of %d streams walked in place", walked, len(files))
	assert.Greater(t, walked, len(files)/2, "streams walked in place, of %d", len(files))
}
