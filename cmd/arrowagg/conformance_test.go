package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The conformance check: every file of the Arrow and Parquet projects'
// corpora read by `arrowagg --format json`, its exit status and numbers
// checked against what is known of it:
//
//   - testdata/conformance/expectations.tsv: per file and column (the
//     elements of a list or map, "tags[]", "m{key}", read with -c), the
//     count, null_count, min, max and sum (- for not checked), and where
//     each row comes from (the corpora's documentation, a cross-check
//     between files, or "unchecked": arrowagg's own answer, kept as a
//     regression check);
//   - a parquet-testing file's X_expect.csv beside it (its rows): the
//     count and null_count of each column, and the min, max and sum of its
//     integer columns;
//   - testdata/conformance/refusals.tsv: the files (glob patterns) that
//     must exit 2, and what their message must say;
//   - testdata/conformance/flags.tsv: the flags some files (glob
//     patterns) are read with (the keys of encrypted files), and what the
//     message must say when they are read without them (exit status 2);
//   - every other file must exit 0; the corrupt and fuzzed inputs
//     (bad_data, fuzz) 0 or 2; never another status, a crash or a hang.
//
// ARROWAGG_CONFORMANCE_DIRS (paths separated by the list separator) names
// the folders to walk instead of the corpus beside the repository
// (scripts/conformance.sh sets it).

const conformanceDir = "../../testdata/conformance"

// conformanceTimeout is the most one file may take: past it, a hang.
const conformanceTimeout = 2 * time.Minute

// expectation is a row of expectations.tsv.
type expectation struct {
	file, column                string
	count, nulls, min, max, sum string // "-": not checked
	source                      string
}

// refusal is a row of refusals.tsv.
type refusal struct {
	pattern, message, why string
}

// fileFlags is a row of flags.tsv.
type fileFlags struct {
	pattern string
	flags   []string
	without string // what the message says without the flags ("-": not checked)
	why     string
}

func readTSV(t *testing.T, name string, fields int) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(conformanceDir, name))
	require.NoError(t, err)
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		if sc.Text() == "" || strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		row := strings.Split(sc.Text(), "\t")
		require.Len(t, row, fields, "%s:%d", name, line)
		rows = append(rows, row)
	}
	require.NoError(t, sc.Err())
	return rows
}

// corpusName is a file's name from its corpus down (parquet-testing/...,
// arrow-testing/...), or relative to the folder walked.
func corpusName(dir, file string) string {
	abs, err := filepath.Abs(file)
	if err == nil {
		s := filepath.ToSlash(abs)
		for _, c := range []string{"/parquet-testing/", "/arrow-testing/"} {
			if i := strings.LastIndex(s, c); i >= 0 {
				return s[i+1:]
			}
		}
	}
	rel, _ := filepath.Rel(dir, file)
	return filepath.ToSlash(rel)
}

// conformanceFiles are the files of dir the check reads: every file but
// documentation and expected outputs, except under bad_data and fuzz
// folders, whose every file is an input.
func conformanceFiles(t *testing.T, dir string) []string {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".md", ".txt", ".csv", ".py", ".yaml", ".gz", ".json", ".sh", ".gitignore", ".bin", "":
			if !strings.Contains(p, "fuzz") && !strings.Contains(p, "bad_data") {
				return nil
			}
		}
		files = append(files, p)
		return nil
	})
	require.NoError(t, err)
	return files
}

type conformanceResult struct {
	Columns []map[string]json.RawMessage
}

// jsonValue renders a JSON value of the output as expectations.tsv writes
// it: numbers as they are printed, strings without quotes, null as null.
func jsonValue(raw json.RawMessage) string {
	if raw == nil {
		return "absent"
	}
	if string(raw) == "null" {
		return "null"
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	return string(raw)
}

func TestConformance(t *testing.T) {
	var dirs []string
	if env := os.Getenv("ARROWAGG_CONFORMANCE_DIRS"); env != "" {
		dirs = filepath.SplitList(env)
	} else {
		if _, err := os.Stat(corpus); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("the conformance corpus is missing in CI: %v", err)
			}
			t.Skipf("no conformance corpus at %s", corpus)
		}
		dirs = []string{corpus}
	}
	byFile := map[string][]expectation{}
	for _, r := range readTSV(t, "expectations.tsv", 8) {
		e := expectation{r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]}
		require.NotEmpty(t, e.source, "%s %s: where the expectation comes from", e.file, e.column)
		byFile[e.file] = append(byFile[e.file], e)
	}
	var refusals []refusal
	for _, r := range readTSV(t, "refusals.tsv", 3) {
		refusals = append(refusals, refusal{r[0], r[1], r[2]})
	}
	var flagRows []fileFlags
	for _, r := range readTSV(t, "flags.tsv", 4) {
		flagRows = append(flagRows, fileFlags{r[0], strings.Fields(r[1]), r[2], r[3]})
	}
	seen := map[string]bool{}
	for _, dir := range dirs {
		for _, file := range conformanceFiles(t, dir) {
			name := corpusName(dir, file)
			seen[name] = true
			t.Run(name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), conformanceTimeout)
				defer cancel()
				args := []string{"--format", "json", "--device", "cpu", "--threads", "2", file}
				for _, f := range flagRows {
					if ok, _ := path.Match(f.pattern, name); ok {
						if f.without != "-" { // without its flags: refused, saying why
							var stdout, stderr bytes.Buffer
							code := run(ctx, args, env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, mem: memory.NewGoAllocator()})
							require.Equal(t, 2, code, "%s without %v (%s): %s", name, f.flags, f.why, stderr.String())
							assert.Contains(t, stderr.String(), f.without, name)
							assert.Contains(t, stderr.String(), filepath.Base(file), "%s: the message names the file", name)
							assert.Empty(t, stdout.String(), name)
						}
						args = append(f.flags, args...)
						break
					}
				}
				var stdout, stderr bytes.Buffer
				code := run(ctx, args, env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, mem: memory.NewGoAllocator()})
				require.NoError(t, ctx.Err(), "%s: no answer within %s", name, conformanceTimeout)
				require.Contains(t, []int{0, 2}, code, "%s: %s", name, stderr.String())
				assert.NotContains(t, stderr.String(), "goroutine ", name)
				if strings.Contains(name, "bad_data") || strings.Contains(name, "fuzz") {
					return // an answer or an input error
				}
				for _, r := range refusals {
					if ok, _ := path.Match(r.pattern, name); ok {
						require.Equal(t, 2, code, "%s should be refused (%s)", name, r.why)
						assert.Contains(t, stderr.String(), r.message, name)
						assert.Contains(t, stderr.String(), filepath.Base(file), "%s: the message names the file", name)
						return
					}
				}
				require.Equal(t, 0, code, "%s: %s", name, stderr.String())
				var res conformanceResult
				dec := json.NewDecoder(&stdout)
				require.NoError(t, dec.Decode(&res), name)
				cols := map[string]map[string]json.RawMessage{}
				for _, c := range res.Columns {
					cols[jsonValue(c["name"])] = c
				}
				// The element columns of lists and maps are named with -c.
				var elems []string
				for _, e := range byFile[name] {
					if strings.ContainsAny(e.column, "[{") {
						elems = append(elems, e.column)
					}
				}
				if len(elems) > 0 {
					stdout.Reset()
					stderr.Reset()
					code := run(ctx, []string{"--format", "json", "--device", "cpu", "-c", strings.Join(elems, ","), file},
						env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, mem: memory.NewGoAllocator()})
					require.Equal(t, 0, code, "%s -c %s: %s", name, strings.Join(elems, ","), stderr.String())
					var res conformanceResult
					require.NoError(t, json.NewDecoder(&stdout).Decode(&res), name)
					for _, c := range res.Columns {
						cols[jsonValue(c["name"])] = c
					}
				}
				for _, e := range byFile[name] {
					c, ok := cols[e.column]
					if !assert.True(t, ok, "%s: no column %q", name, e.column) {
						continue
					}
					for _, f := range []struct{ key, want string }{
						{"count", e.count}, {"null_count", e.nulls}, {"min", e.min}, {"max", e.max}, {"sum", e.sum},
					} {
						if f.want != "-" {
							assert.Equal(t, f.want, jsonValue(c[f.key]), "%s: %s: %s (%s)", name, e.column, f.key, e.source)
						}
					}
				}
				checkExpectCSV(t, file, cols)
			})
		}
	}
	if os.Getenv("ARROWAGG_CONFORMANCE_DIRS") == "" {
		for f := range byFile {
			assert.True(t, seen[f], "expectations.tsv names %s, which the corpus does not have", f)
		}
	}
}

// checkExpectCSV checks the columns of a Parquet file against the rows of
// the X_expect.csv beside it, if any: count and null_count (an empty cell
// is a null), and min, max and sum where every value is an integer.
func checkExpectCSV(t *testing.T, file string, cols map[string]map[string]json.RawMessage) {
	t.Helper()
	f, err := os.Open(strings.TrimSuffix(file, ".parquet") + "_expect.csv")
	if err != nil {
		return
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	// The files' names and the CSV's headers differ by spaces and a
	// trailing colon (delta_encoding_required_column).
	norm := func(s string) string { return strings.TrimSuffix(strings.TrimSpace(s), ":") }
	byName := map[string]map[string]json.RawMessage{}
	for name, c := range cols {
		byName[norm(name)] = c
	}
	checked := 0
	for i, name := range rows[0] {
		c, ok := byName[norm(name)]
		if !ok {
			continue
		}
		checked++
		var count, nulls int
		sum := new(big.Int)
		var lo, hi *big.Int
		ints := true
		for _, r := range rows[1:] {
			if r[i] == "" {
				nulls++
				continue
			}
			count++
			v, ok := new(big.Int).SetString(r[i], 10)
			if !ok {
				ints = false
				continue
			}
			sum.Add(sum, v)
			if lo == nil || v.Cmp(lo) < 0 {
				lo = v
			}
			if hi == nil || v.Cmp(hi) > 0 {
				hi = v
			}
		}
		assert.Equal(t, fmt.Sprint(count), jsonValue(c["count"]), "%s: %s: count (_expect.csv)", file, name)
		assert.Equal(t, fmt.Sprint(nulls), jsonValue(c["null_count"]), "%s: %s: null_count (_expect.csv)", file, name)
		if typ := jsonValue(c["type"]); ints && lo != nil && (strings.HasPrefix(typ, "int") || strings.HasPrefix(typ, "uint")) {
			assert.Equal(t, sum.String(), jsonValue(c["sum"]), "%s: %s: sum (_expect.csv)", file, name)
			assert.Equal(t, lo.String(), jsonValue(c["min"]), "%s: %s: min (_expect.csv)", file, name)
			assert.Equal(t, hi.String(), jsonValue(c["max"]), "%s: %s: max (_expect.csv)", file, name)
		}
	}
	assert.Positive(t, checked, "%s: no column of _expect.csv checked", file)
}
