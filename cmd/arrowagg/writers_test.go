package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Files that other Parquet writers produce, read by the command and checked
// against answers that do not come from arrowagg: DuckDB's files of
// testdata/writers/duckdb against DuckDB's own answers recorded beside
// them (duckdb_files_test.go), and files parquet-go writes in the test
// against the data the test generated (parquetgo_test.go).

// writerWant is what a column's aggregates must be, as the JSON output
// prints them (nil: null). The sum, min and max of a float column are
// compared as numbers (the JSON prints 42.0 where Go prints 42).
type writerWant struct {
	Name      string  `json:"name"`
	Count     string  `json:"count"`
	NullCount string  `json:"null_count"`
	Sum       *string `json:"sum"`
	Min       *string `json:"min"`
	Max       *string `json:"max"`
	float     bool
}

// writerAggs are the two runs of each file: every aggregate (the pages
// are read), and the aggregates that row groups' statistics answer (the
// footer answers them where it can).
var writerAggs = [][]string{{"-a", "count,null_count,sum,min,max"}, {"-a", "count,null_count,min,max"}}

// deltaLeak is why a file whose pages arrow-go's DELTA_BINARY_PACKED
// decoder reads (DELTA_* columns that the page path leaves to pqarrow)
// cannot be read with a checked allocator (dataset's tests say the same).
const deltaLeak = "arrow-go v17's DELTA_BINARY_PACKED decoder never frees its miniblock bit widths (deltaBitPackDecoder.deltaBitWidths)"

// checkWriterFile runs the command on file with aggs and checks its rows
// and each column of want. The run's allocator is checked, unless leaks
// says why it cannot be.
func checkWriterFile(t *testing.T, file string, aggs []string, rows int64, want []writerWant, leaks string) {
	t.Helper()
	args := append([]string{"--format", "json", "--device", "cpu", "--threads", "2"}, aggs...)
	args = append(args, file)
	var got invocation
	if leaks == "" {
		got = runIn(t, context.Background(), env{}, args...)
	} else {
		t.Log("not checking the allocator:", leaks)
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, mem: memory.NewGoAllocator()})
		got = invocation{code, stdout.String(), stderr.String()}
	}
	require.Equal(t, 0, got.code, "%s %v: %s", file, aggs, got.stderr)
	var res struct {
		Rows    json.Number
		Columns []map[string]json.RawMessage
	}
	require.NoError(t, json.Unmarshal([]byte(got.stdout), &res))
	assert.Equal(t, strconv.FormatInt(rows, 10), res.Rows.String(), "%s: rows", file)
	cols := map[string]map[string]json.RawMessage{}
	for _, c := range res.Columns {
		cols[jsonValue(c["name"])] = c
	}
	assert.Len(t, cols, len(want), "%s: columns", file)
	withSum := aggs[1] == "count,null_count,sum,min,max"
	for _, w := range want {
		c, ok := cols[w.Name]
		if !assert.True(t, ok, "%s: no column %q", file, w.Name) {
			continue
		}
		checks := []struct {
			key  string
			want *string
		}{{"count", &w.Count}, {"null_count", &w.NullCount}, {"min", w.Min}, {"max", w.Max}}
		if withSum {
			checks = append(checks, struct {
				key  string
				want *string
			}{"sum", w.Sum})
		}
		for _, k := range checks {
			gotV := jsonValue(c[k.key])
			if k.want == nil {
				assert.Equal(t, "null", gotV, "%s %v: %s: %s", file, aggs, w.Name, k.key)
				continue
			}
			if w.float && k.key != "count" && k.key != "null_count" {
				wf, err := strconv.ParseFloat(*k.want, 64)
				require.NoError(t, err)
				gf, err := strconv.ParseFloat(gotV, 64)
				if assert.NoError(t, err, "%s %v: %s: %s: %s", file, aggs, w.Name, k.key, gotV) {
					assert.Equal(t, wf, gf, "%s %v: %s: %s", file, aggs, w.Name, k.key)
				}
				continue
			}
			assert.Equal(t, *k.want, gotV, "%s %v: %s: %s", file, aggs, w.Name, k.key)
		}
	}
}

// duckdbFiles is DuckDB's files and answers (bench/cmd/duckfiles writers).
const duckdbFiles = testdata + "/writers/duckdb"

// TestDuckDBFiles reads each of DuckDB's files, every codec it writes in
// Parquet versions V1 and V2, and checks the answers against DuckDB's
// (expected.json). DuckDB's float sums are exact for these values (the
// command that wrote them checked each against an exact decimal sum), so
// floats are compared exactly too.
func TestDuckDBFiles(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(duckdbFiles, "expected.json"))
	require.NoError(t, err)
	var exp struct {
		Rows    int64 `json:"rows"`
		Columns []struct {
			writerWant
			Type string `json:"duckdb_type"`
		} `json:"columns"`
		Files []struct {
			File    string `json:"file"`
			Version string `json:"parquet_version"`
		} `json:"files"`
	}
	require.NoError(t, json.Unmarshal(b, &exp))
	require.Len(t, exp.Files, 12, "six codecs in two versions")
	var want []writerWant
	for _, c := range exp.Columns {
		c.writerWant.float = c.Type == "DOUBLE" || c.Type == "FLOAT"
		want = append(want, c.writerWant)
	}
	require.NotEmpty(t, want)
	for _, f := range exp.Files {
		t.Run(f.File, func(t *testing.T) {
			leaks := ""
			if f.Version == "V2" { // DuckDB's V2 writes DELTA_BINARY_PACKED decimals, DELTA_LENGTH_BYTE_ARRAY strings
				leaks = deltaLeak
			}
			for _, aggs := range writerAggs {
				checkWriterFile(t, filepath.Join(duckdbFiles, f.File), aggs, exp.Rows, want, leaks)
			}
		})
	}
}
