package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/internal/testdatagen"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/golden")

// testdata is the repository's testdata directory, as the tests name it.
const testdata = "../../testdata"

// invocation is the outcome of one run.
type invocation struct {
	code           int
	stdout, stderr string
}

// runIn runs the command in this process with a checked allocator, which
// must end empty.
func runIn(t *testing.T, ctx context.Context, e env, args ...string) invocation {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var stdout, stderr bytes.Buffer
	if e.stdin == nil {
		e.stdin = strings.NewReader("")
	}
	if e.stdout == nil {
		e.stdout = &stdout
	}
	e.stderr, e.mem = &stderr, mem
	code := run(ctx, args, e)
	return invocation{code, stdout.String(), stderr.String()}
}

func TestGolden(t *testing.T) {
	opaque := opaqueInputs(t) // (the outputs name no file)
	narrow := t.TempDir()
	require.NoError(t, testdatagen.WriteNarrow(narrow))
	cases := []struct {
		golden string
		args   []string
		stderr string
	}{
		{"all.table.txt", []string{"--device", "cpu", testdata}, ""},
		{"all.json", []string{"--format", "json", "--device", "cpu", testdata}, ""},
		{"all.csv", []string{"-f", "csv", "--device=cpu", testdata + "/"}, ""},
		{"sample.parquet.json", []string{"--format=json", "--device", "cpu", testdata + "/sample.parquet"}, ""},
		{"sample.arrow.json", []string{"--format", "json", "--device", "cpu", testdata + "/sample.arrow"}, ""},
		{"sample.arrows.json", []string{"--format", "json", "--device", "cpu", testdata + "/sample.arrows"}, ""},
		{"tags.table.txt", []string{"-c", "tags", "-a", "count,null_count", "--device", "cpu", testdata}, ""},
		{"opaque.table.txt", []string{"--device", "cpu", opaque + "/opaque.arrow"}, ""},
		{"opaque.json", []string{"-f", "json", "--device", "cpu", opaque + "/opaque.parquet"}, ""},
		{"narrow.table.txt", []string{"--device", "cpu", narrow}, ""},
		{"narrow.json", []string{"-f", "json", "--device", "cpu", "-a", "count,null_count,sum,min,max,mean,first,last,arg_min,arg_max", narrow + "/narrow.parquet"}, ""},
		{"narrow.arrows.json", []string{"-f", "json", "--device", "cpu", "-a", "count,null_count,sum,min,max,mean,first,last,stddev", narrow + "/narrow.arrows"}, ""},
		{"subset.table.txt", []string{"-c", "point,u64,price,ts_paris,elapsed", "-a", "sum,min,max", "--threads", "1", "--device", "cpu", testdata + "/sample.*"}, ""},
		{"subset.csv", []string{"-c", "word,note,blob,color,clock_ns,day64", "-a", "count,min,max", "-f", "csv", "--device", "cpu", testdata}, ""},
		{"stats.json", []string{"-f", "json", "-a", "count,mean,stddev,variance,approx_distinct", "--device", "cpu", testdata}, ""},
		{"stats.csv", []string{"-f", "csv", "-a", "approx_distinct,variance,count", "--device", "cpu", testdata + "/sample.parquet"}, ""},
		{"schema.table.txt", []string{"--schema", testdata}, ""},
		{"schema.json", []string{"--schema", "-f", "json", testdata + "/sample.arrows"}, ""},
		{"schema.csv", []string{"--schema", "-f", "csv", testdata + "/sample.parquet"}, ""},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			got := runIn(t, context.Background(), env{}, c.args...)
			require.Equal(t, 0, got.code, got.stderr)
			assert.Equal(t, c.stderr, got.stderr)
			path := filepath.Join(testdata, "golden", c.golden)
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(got.stdout), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "make testdata writes the golden files")
			assert.Equal(t, string(want), got.stdout, "golden file %s (make testdata rewrites it)", path)
			if strings.HasSuffix(c.golden, ".json") {
				assert.True(t, json.Valid([]byte(got.stdout)))
			}
		})
	}
}

// The results do not depend on the thread count.
func TestSameResultsForEveryThreadCount(t *testing.T) {
	want := runIn(t, context.Background(), env{}, "-f", "json", "--device", "cpu", "--threads", "1", testdata)
	require.Equal(t, 0, want.code, want.stderr)
	for _, args := range [][]string{{"--threads", "2"}, {"--threads", "7"}, {}} {
		got := runIn(t, context.Background(), env{}, append([]string{"-f", "json", "--device", "cpu", testdata}, args...)...)
		require.Equal(t, 0, got.code, got.stderr)
		assert.Equal(t, want.stdout, got.stdout, "%v", args)
	}
}

func TestHelpAndVersion(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		got := runIn(t, context.Background(), env{}, arg)
		assert.Equal(t, 0, got.code)
		assert.True(t, strings.HasPrefix(got.stdout, "Usage: arrowagg [flags] PATH...\n"), got.stdout)
		for _, f := range []string{"-c, --columns", "-a, --aggs", "-f, --format", "--device", "--explain", "--no-stats", "--threads", "--progress", "--version", "--help"} {
			assert.Contains(t, got.stdout, f)
		}
		assert.Empty(t, got.stderr)
	}
	got := runIn(t, context.Background(), env{}, "--version")
	assert.Equal(t, 0, got.code)
	assert.Regexp(t, `^arrowagg \S+.* \(go\S+, \w+/\w+, (CPU backend only|with the CUDA backend)\)\n$`, got.stdout)
}

func TestExplain(t *testing.T) {
	got := runIn(t, context.Background(), env{}, "--explain", "--device", "cpu", "-c", "i8,word", "-f", "json", testdata)
	require.Equal(t, 0, got.code, got.stderr)
	var out struct {
		Columns []map[string]any `json:"columns"`
		Plan    []struct {
			Name, Backend, Location, Reason string
			Bytes                           int64
			Measured                        float64 `json:"measured_s"`
		} `json:"plan"`
	}
	require.NoError(t, json.Unmarshal([]byte(got.stdout), &out), got.stdout)
	require.Len(t, out.Plan, 2, "with --format json the plan is printed beside the columns")
	for i, p := range out.Plan {
		assert.Equal(t, out.Columns[i]["name"], p.Name)
		assert.Equal(t, "cpu", p.Backend)
		assert.Equal(t, "host", p.Location)
		assert.Equal(t, "cpu forced", p.Reason)
		assert.Positive(t, p.Bytes)
		assert.Positive(t, p.Measured)
	}
	lines := strings.Split(strings.TrimSuffix(got.stderr, "\n"), "\n")
	require.Len(t, lines, 4, got.stderr)
	assert.Regexp(t, `^plan: device cpu \(.*\); \d+ CPU threads; 2300 rows in 1 parquet, 1 arrow-file, 1 arrow-stream, \d+ bytes on disk$`, lines[0])
	assert.Regexp(t, `^column +type +backend +data in +bytes +estimated +measured +why$`, lines[1])
	// i8: 2300 values of one byte and the validity bitmaps of its batches
	assert.Regexp(t, `^i8 +int8 +cpu +host +2\d{3} +\S+ +\S+ +cpu forced$`, lines[2])
	assert.Regexp(t, `^word +utf8 +cpu +host +\d+ +\S+ +\S+ +cpu forced$`, lines[3])

	got = runIn(t, context.Background(), env{}, "--explain", "-c", "u8", testdata+"/sample.arrow")
	require.Equal(t, 0, got.code, got.stderr)
	if backend.GPUBuiltIn() {
		assert.Regexp(t, `u8 +uint8 +(gpu|cpu|cpu\+gpu) +host +\d+ `, got.stderr)
	} else {
		assert.Regexp(t, `u8 +uint8 +cpu +host +\d+ +\S+ +\S+ +cpu: no GPU\n`, got.stderr)
	}
}

// Count, null_count, min and max come from the Parquet row-group statistics
// where they answer them, and --explain says so; --no-stats reads every
// chunk. The results are the same.
func TestNoStats(t *testing.T) {
	type plan struct {
		Name, Backend, Location, Reason string
		Bytes                           int64
	}
	parse := func(out string) (columns json.RawMessage, plans []plan) {
		var doc struct {
			Columns json.RawMessage `json:"columns"`
			Plan    []plan          `json:"plan"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
		return doc.Columns, doc.Plan
	}
	for _, in := range []string{testdata + "/sample.parquet", testdata} {
		args := []string{"--explain", "-f", "json", "-a", "count,null_count,min,max", "--device", "cpu", in}
		with := runIn(t, context.Background(), env{}, args...)
		require.Equal(t, 0, with.code, with.stderr)
		without := runIn(t, context.Background(), env{}, append([]string{"--no-stats"}, args...)...)
		require.Equal(t, 0, without.code, without.stderr)
		colsWith, plansWith := parse(with.stdout)
		colsWithout, plansWithout := parse(without.stdout)
		assert.JSONEq(t, string(colsWithout), string(colsWith), in)
		for _, p := range plansWithout {
			assert.NotContains(t, p.Backend, "stats", p.Name)
			assert.NotContains(t, p.Reason, "statistics", p.Name)
		}
		assert.NotContains(t, without.stderr, "statistics")
		if in == testdata {
			continue // the plan of several files is that of the last, its amounts those of all
		}
		// sample.parquet: four row groups
		fromStats := 0
		for _, p := range plansWith {
			if strings.HasPrefix(p.Backend, "stats") {
				fromStats++
				assert.Equal(t, "stats", p.Backend, p.Name)
				assert.Equal(t, "metadata", p.Location, p.Name)
				assert.Equal(t, "from row-group statistics (4 of 4 row groups)", p.Reason, p.Name)
				assert.Zero(t, p.Bytes, p.Name)
			}
		}
		// signed integers, dates, times, timestamps and a struct's int32
		assert.Equal(t, 10, fromStats, with.stdout)
		assert.Regexp(t, `\ni64 +int64 +stats +metadata +0 +\S+ +\S+ +from row-group statistics \(4 of 4 row groups\)\n`, with.stderr)
	}

	// Sums read the data.
	sums := runIn(t, context.Background(), env{}, "--explain", "-f", "json", "-a", "count,sum", "--device", "cpu", testdata+"/sample.parquet")
	require.Equal(t, 0, sums.code, sums.stderr)
	_, plans := parse(sums.stdout)
	for _, p := range plans {
		assert.NotContains(t, p.Backend, "stats", p.Name)
	}
}

func TestProgressAlways(t *testing.T) {
	want := runIn(t, context.Background(), env{}, "-f", "json", testdata)
	got := runIn(t, context.Background(), env{}, "--progress", "always", "-f", "json", testdata)
	require.Equal(t, 0, got.code, got.stderr)
	assert.Equal(t, want.stdout, got.stdout, "the bar never touches stdout")
	assert.Contains(t, got.stderr, "\rreading ")
	empty := emptyStructInput(t, t.TempDir())
	got = runIn(t, context.Background(), env{}, "--progress", "always", "-f", "json", testdata, empty)
	require.Equal(t, 0, got.code, got.stderr)
	assert.Contains(t, got.stderr, "\r"+emptyNote, "notes still get a line of their own")

	// auto: no bar for small inputs, nor off a terminal; never: none
	for _, c := range []struct {
		mode string
		term bool
	}{{"auto", false}, {"auto", true}, {"never", true}} {
		got = runIn(t, context.Background(), env{stderrTerminal: c.term}, "--progress", c.mode, "-c", "u8", testdata)
		require.Equal(t, 0, got.code, got.stderr)
		assert.Empty(t, got.stderr, "%+v", c)
	}
}

func TestStdin(t *testing.T) {
	stream, err := os.ReadFile(filepath.Join(testdata, "sample.arrows"))
	require.NoError(t, err)
	want := runIn(t, context.Background(), env{}, "-f", "json", testdata+"/sample.arrows")
	got := runIn(t, context.Background(), env{stdin: bytes.NewReader(stream)}, "-f", "json", "-")
	require.Equal(t, 0, got.code, got.stderr)
	assert.Equal(t, want.stdout, got.stdout)
}

func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got := runIn(t, ctx, env{}, testdata)
	assert.Equal(t, invocation{exitInterrupted, "", "arrowagg: interrupted\n"}, got)
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestInternalError(t *testing.T) {
	got := runIn(t, context.Background(), env{stdout: failingWriter{}}, "-c", "u8", testdata)
	assert.Equal(t, exitInternal, got.code)
	assert.Equal(t, "arrowagg: writing the table output: disk full\n", got.stderr)
}

func writeIPCFile(t *testing.T, path string, field arrow.Field, arr arrow.Array) {
	t.Helper()
	rec := array.NewRecord(arrow.NewSchema([]arrow.Field{field}, nil), []arrow.Array{arr}, int64(arr.Len()))
	defer rec.Release()
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(rec.Schema()))
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
}

// badInputs makes the damaged inputs of the bad-input tests in dir.
func badInputs(t *testing.T, dir string) {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(testdata, name))
		require.NoError(t, err)
		return b
	}
	write := func(name string, b []byte) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	pq, af, as := read("sample.parquet"), read("sample.arrow"), read("sample.arrows")
	write("empty.parquet", nil)
	write("trunc.parquet", pq[:len(pq)/2])
	zeroed := bytes.Clone(pq)
	copy(zeroed[600:], make([]byte, 400)) // the first pages of the first column chunks
	write("zeroed.parquet", zeroed)
	footer := bytes.Clone(pq)
	copy(footer[len(footer)-3000:], bytes.Repeat([]byte{0xFF}, 64)) // inside the footer
	write("footer.parquet", footer)
	write("trunc.arrow", af[:len(af)-100])
	write("trunc.arrows", as[:len(as)/2])
	write("notes.txt", []byte("name,value\na,1\n"))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "nodata"), 0o755))
	write("nodata/readme.md", []byte("# nothing here\n"))

	ib := array.NewInt64Builder(memory.DefaultAllocator)
	ib.AppendValues([]int64{1, 2}, nil)
	i64 := ib.NewArray()
	ib.Release()
	defer i64.Release()
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	sb.AppendValues([]string{"x"}, nil)
	str := sb.NewArray()
	sb.Release()
	defer str.Release()
	writeIPCFile(t, filepath.Join(dir, "u8_as_int64.arrow"), arrow.Field{Name: "u8", Type: arrow.PrimitiveTypes.Int64}, i64)
	writeIPCFile(t, filepath.Join(dir, "x_string.arrow"), arrow.Field{Name: "x", Type: arrow.BinaryTypes.String}, str)
	emptyStructInput(t, dir)
}

// Bad usage and bad input: exit status 2, one line on stderr naming the
// input and the problem, nothing on stdout.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	badInputs(t, dir)
	in := func(name string) string { return filepath.Join(dir, name) }
	q := regexp.QuoteMeta
	pq := testdata + "/sample.parquet"
	cases := []struct {
		name   string
		args   []string
		e      env
		stderr string // a regular expression for the single line
	}{
		{"missing file", []string{in("nope.parquet")}, env{}, q(in("nope.parquet")) + `: no such file or directory`},
		{"directory without data files", []string{in("nodata")}, env{}, q(in("nodata")) + `: no Parquet or Arrow IPC files in this directory`},
		{"empty file", []string{in("empty.parquet")}, env{}, q(in("empty.parquet")) + `: empty file`},
		{"truncated parquet", []string{in("trunc.parquet")}, env{}, q(in("trunc.parquet")) + `: truncated or corrupt Parquet file: no PAR1 magic at the end`},
		{"corrupt parquet pages", []string{in("zeroed.parquet")}, env{}, q(in("zeroed.parquet")) + `: row group 0: .+`},
		{"corrupt parquet footer", []string{in("footer.parquet")}, env{}, q(in("footer.parquet")) + `: .+`},
		{"truncated ipc file", []string{in("trunc.arrow")}, env{}, q(in("trunc.arrow")) + `: truncated or corrupt Arrow IPC file: no ARROW1 magic at the end`},
		{"truncated ipc stream", []string{in("trunc.arrows")}, env{}, q(in("trunc.arrows")) + `: .*unexpected EOF`},
		{"wrong magic", []string{in("notes.txt")}, env{}, q(in("notes.txt")) + `: not a Parquet file, Arrow IPC file or Arrow IPC stream`},
		{"bad file among good ones", []string{testdata, in("trunc.parquet")}, env{}, q(in("trunc.parquet")) + `: truncated .+`},
		{"unknown column", []string{"-c", "u8,nope", pq}, env{}, q(pq) + `: unknown column "nope" \(columns: i8, i16, .+, tags\)`},
		{"unsupported column named", []string{"-c", "e", in("empty.arrow")}, env{}, q(in("empty.arrow")) + `: column "e": empty struct has no leaf to aggregate`},
		{"same name, other type", []string{pq, in("u8_as_int64.arrow")}, env{}, q(in("u8_as_int64.arrow")) + `: column "u8" is int64 here but uint8 in ` + q(pq)},
		{"stdin is a terminal", []string{"-"}, env{stdinTerminal: true}, `stdin: is a terminal; pipe an Arrow IPC stream into it`},
		{"stdin is not a stream", []string{"-"}, env{stdin: strings.NewReader("hello, world\n")}, `stdin: reading an Arrow IPC stream: .+`},
		{"empty stdin", []string{"-"}, env{}, `stdin: reading an Arrow IPC stream: .+`},
		{"unknown flag", []string{"--frobnicate", pq}, env{}, `unknown flag: --frobnicate`},
		{"bad aggregate", []string{"-a", "sum,median", pq}, env{}, `--aggs: unknown aggregate "median" \(want any of count, null_count, sum, min, max, mean, stddev, variance, approx_distinct, first, last, arg_min, arg_max\)`},
		{"bad format", []string{"--format", "xml", pq}, env{}, `--format: unknown format "xml" \(want table, json or csv\)`},
		{"bad device", []string{"--device", "tpu", pq}, env{}, `--device: unknown device "tpu" \(want auto, cpu or gpu\)`},
		{"bad progress", []string{"--progress", "sometimes", pq}, env{}, `--progress: unknown mode "sometimes" \(want auto, always or never\)`},
		{"negative threads", []string{"--threads", "-1", pq}, env{}, `--threads: -1 is negative`},
		{"threads not a number", []string{"--threads", "many", pq}, env{}, `invalid argument "many" for "--threads" flag: .+`},
		{"empty column name", []string{"-c", "u8,,i8", pq}, env{}, `--columns: empty column name`},
		{"no input", nil, env{}, `no input: name files, directories, globs or - \(stdin\); see arrowagg --help`},
	}
	if !backend.GPUBuiltIn() {
		cases = append(cases, struct {
			name   string
			args   []string
			e      env
			stderr string
		}{"gpu without the CUDA backend", []string{"--device", "gpu", pq}, env{}, `--device gpu: no GPU backend: this build has no CUDA support \(build with -tags cuda\)`})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := runIn(t, context.Background(), c.e, c.args...)
			assert.Equal(t, exitInput, got.code)
			assert.Empty(t, got.stdout, "nothing is reported")
			stderr := got.stderr
			assert.Regexp(t, "^arrowagg: "+c.stderr+"\n$", stderr)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			assert.NotContains(t, got.stderr, "goroutine", "no stack trace")
		})
	}
}

// naive computes a few aggregates of the whole of testdata/ the plainest
// way, from the generator's rows, to check the contract's hard cases
// (integer sums beyond 64 bits, decimals, NaN and infinities, temporal
// types, strings, nulls, columns missing from a file) independently of the
// engine and the formatting code.
func naive(t *testing.T) map[string]map[string]string {
	t.Helper()
	type acc struct {
		count, nulls int64
		sum          big.Int
		fsum         float64
		fmin         float64
		smax         string
		imin, imax   int64
		seen         bool
	}
	accs := map[string]*acc{}
	get := func(name string) *acc {
		if accs[name] == nil {
			accs[name] = &acc{fmin: math.Inf(1)}
		}
		return accs[name]
	}
	var rows int64
	for _, f := range testdatagen.Files {
		rows += int64(f.Rows)
		for _, name := range f.Omit {
			get(name).nulls += int64(f.Rows)
		}
		rec := testdatagen.Record(memory.DefaultAllocator, f, 0, f.Rows)
		for i, col := range rec.Columns() {
			a := get(rec.ColumnName(i))
			for r := 0; r < col.Len(); r++ {
				if col.IsNull(r) {
					a.nulls++
					continue
				}
				a.count++
				var iv int64
				switch c := col.(type) {
				case *array.Uint64:
					a.sum.Add(&a.sum, new(big.Int).SetUint64(c.Value(r)))
				case *array.Int64:
					a.sum.Add(&a.sum, big.NewInt(c.Value(r)))
				case *array.Decimal128:
					a.sum.Add(&a.sum, c.Value(r).BigInt())
				case *array.Duration:
					a.sum.Add(&a.sum, big.NewInt(int64(c.Value(r))))
				case *array.Boolean:
					if c.Value(r) {
						a.sum.Add(&a.sum, big.NewInt(1))
					}
				case *array.Float32:
					a.fsum += float64(c.Value(r))
					a.fmin = math.Min(a.fmin, float64(c.Value(r)))
				case *array.Float64:
					a.fsum += c.Value(r)
				case *array.String:
					a.smax = max(a.smax, c.Value(r))
				case *array.Date32:
					iv = int64(c.Value(r))
				case *array.Timestamp:
					iv = int64(c.Value(r))
				}
				if !a.seen || iv < a.imin {
					a.imin = iv
				}
				if !a.seen || iv > a.imax {
					a.imax = iv
				}
				a.seen = true
			}
		}
		rec.Release()
	}
	out := map[string]map[string]string{"": {"rows": fmt.Sprint(rows)}}
	for name, a := range accs {
		out[name] = map[string]string{"count": fmt.Sprint(a.count), "null_count": fmt.Sprint(a.nulls)}
	}
	out["u64"]["sum"] = accs["u64"].sum.String()
	out["i64"]["sum"] = accs["i64"].sum.String()
	out["flag"]["sum"] = accs["flag"].sum.String()
	out["price"]["sum"] = `"` + new(big.Rat).SetFrac(&accs["price"].sum, big.NewInt(100)).FloatString(2) + `"`
	out["elapsed"]["sum"] = `"` + accs["elapsed"].sum.String() + `ms"`
	require.True(t, math.IsInf(accs["f32"].fsum, -1))
	out["f32"]["sum"] = `"-Inf"`
	out["f32"]["min"] = `"-Inf"`
	require.True(t, math.IsNaN(accs["f64_special"].fsum))
	out["f64_special"]["sum"] = `"NaN"`
	out["word"]["max"] = `"` + accs["word"].smax + `"`
	out["day"]["min"] = `"` + time.Unix(accs["day"].imin*86400, 0).UTC().Format("2006-01-02") + `"`
	out["ts_paris"]["max"] = `"` + time.UnixMicro(accs["ts_paris"].imax).UTC().Format(time.RFC3339Nano) + `"`
	out["ts_ns"]["min"] = `"` + time.Unix(0, accs["ts_ns"].imin).UTC().Format(time.RFC3339Nano) + `"`
	for _, k := range []string{"sum", "min", "max", "mean"} {
		out["f64_empty"][k] = "null"
	}
	return out
}

func TestAgainstNaiveAggregates(t *testing.T) {
	got := runIn(t, context.Background(), env{}, "-f", "json", testdata)
	require.Equal(t, 0, got.code, got.stderr)
	var doc struct {
		Rows    json.Number                  `json:"rows"`
		Columns []map[string]json.RawMessage `json:"columns"`
	}
	dec := json.NewDecoder(strings.NewReader(got.stdout))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&doc))
	want := naive(t)
	assert.Equal(t, want[""]["rows"], doc.Rows.String())
	checked := 0
	for _, c := range doc.Columns {
		var name string
		require.NoError(t, json.Unmarshal(c["name"], &name))
		for k, v := range want[name] {
			assert.Equal(t, v, string(c[k]), "%s %s", name, k)
			checked++
		}
	}
	// count and null_count of the 26 top-level columns that are leaves (the
	// list tags among them), and 16 more aggregates
	assert.Equal(t, 26*2+16, checked, "every expectation met a column")
}

// TestOrderedAcrossFiles: rows count across the files of a dataset in the
// order given, so the dataset's arg_min and arg_max are a file's own plus the
// rows of the files before it, and first/last come from the first and last
// files that have a value.
func TestOrderedAcrossFiles(t *testing.T) {
	files := []string{testdata + "/sample.parquet", testdata + "/sample.arrow", testdata + "/sample.arrows"}
	type col struct {
		Name                  string
		Min, Max, First, Last any
		ArgMin                *int64 `json:"arg_min"`
		ArgMax                *int64 `json:"arg_max"`
	}
	type out struct {
		Rows    int64
		Columns []col
	}
	agg := func(paths ...string) out {
		args := append([]string{"-f", "json", "-c", "i64,f32,word,flag", "-a", "min,max,first,last,arg_min,arg_max"}, paths...)
		got := runIn(t, context.Background(), env{}, args...)
		require.Equal(t, 0, got.code, got.stderr)
		var o out
		require.NoError(t, json.Unmarshal([]byte(got.stdout), &o), got.stdout)
		return o
	}
	all := agg(files...)
	var parts []out
	for _, f := range files {
		parts = append(parts, agg(f))
	}
	for c := range all.Columns {
		want := all.Columns[c]
		var base int64
		foundMin, foundMax := false, false
		var first, last any
		for _, p := range parts {
			pc := p.Columns[c]
			if first == nil {
				first = pc.First
			}
			if pc.Last != nil {
				last = pc.Last
			}
			if !foundMin && pc.ArgMin != nil && fmt.Sprint(pc.Min) == fmt.Sprint(want.Min) {
				assert.Equal(t, base+*pc.ArgMin, *want.ArgMin, "arg_min of %s", want.Name)
				foundMin = true
			}
			if !foundMax && pc.ArgMax != nil && fmt.Sprint(pc.Max) == fmt.Sprint(want.Max) {
				assert.Equal(t, base+*pc.ArgMax, *want.ArgMax, "arg_max of %s", want.Name)
				foundMax = true
			}
			base += p.Rows
		}
		assert.True(t, foundMin && foundMax, want.Name)
		assert.Equal(t, first, want.First, want.Name)
		assert.Equal(t, last, want.Last, want.Name)
	}
	assert.Equal(t, parts[0].Rows+parts[1].Rows+parts[2].Rows, all.Rows)
}
