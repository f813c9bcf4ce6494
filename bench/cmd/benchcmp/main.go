// Command benchcmp times the arrowagg command against DuckDB on one Parquet
// file with the same thread count, and checks that both compute the same
// aggregates.
//
// DuckDB runs in this process through duckdb-go:
//
//	SET threads TO N;
//	SELECT count(*), sum(c), min(c), max(c), count(c), ... FROM read_parquet(FILE)
//
// over every numeric column, in one query. Its time is the query's wall time
// (planning, Parquet metadata, scan, aggregation; the database is opened once).
// arrowagg runs as a child process,
//
//	arrowagg --format json --device cpu --threads N --progress never \
//	         --aggs sum,min,max,count --columns c1,c2,... FILE
//
// with GOMAXPROCS=N, and its time is the process's wall time (start to exit,
// including process start-up and JSON output). Repetitions alternate between
// the two engines after one warm-up run of each (which also fills the page
// cache and provides the results that are compared).
//
// Integer counts, sums, minima and maxima must match exactly; float minima
// and maxima must match exactly (float32 columns after rounding to float32);
// float sums must agree to a relative tolerance (-rtol), since DuckDB sums
// floats in an unspecified order.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow/go/v17/parquet/file"
	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" database/sql driver
)

// column is one numeric column of the file, as DuckDB types it.
type column struct {
	name  string
	dtype string // DuckDB type name: INTEGER, BIGINT, FLOAT, DOUBLE, ...
}

// isFloat reports whether the column holds floating-point values.
func (c column) isFloat() bool { return c.dtype == "FLOAT" || c.dtype == "DOUBLE" }

// numericTypes are the DuckDB column types the benchmark aggregates.
var numericTypes = []string{
	"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
	"UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "FLOAT", "DOUBLE",
}

// num is one aggregate value: null, an exact integer, or a float.
type num struct {
	null  bool
	isInt bool
	i     *big.Int
	f     float64
}

func (n num) String() string {
	switch {
	case n.null:
		return "null"
	case n.isInt:
		return n.i.String()
	default:
		return strconv.FormatFloat(n.f, 'g', -1, 64)
	}
}

// aggs are the aggregates of one column.
type aggs struct {
	count, sum, min, max num
}

// result is what one engine computed.
type result struct {
	rows int64
	cols []aggs // in the order of the benchmark's columns
}

// quoteIdent quotes a SQL identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// quoteString quotes a SQL string literal.
func quoteString(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }

// numericColumns lists the numeric columns of the Parquet file, in order.
func numericColumns(ctx context.Context, db *sql.DB, path string) ([]column, error) {
	rows, err := db.QueryContext(ctx, "DESCRIBE SELECT * FROM read_parquet("+quoteString(path)+")")
	if err != nil {
		return nil, fmt.Errorf("describe %s: %w", path, err)
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("describe %s: %w", path, err)
	}
	var cols []column
	for rows.Next() {
		vals := make([]any, len(names))
		ptrs := make([]any, len(names))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("describe %s: %w", path, err)
		}
		// DESCRIBE's first two columns are column_name and column_type.
		c := column{name: fmt.Sprint(vals[0]), dtype: fmt.Sprint(vals[1])}
		if slices.Contains(numericTypes, c.dtype) {
			cols = append(cols, c)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("describe %s: %w", path, err)
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("%s has no numeric columns", path)
	}
	return cols, nil
}

// duckQuery is the benchmark's SQL query.
func duckQuery(path string, cols []column) string {
	var b strings.Builder
	b.WriteString("SELECT count(*)")
	for _, c := range cols {
		q := quoteIdent(c.name)
		fmt.Fprintf(&b, ", sum(%s), min(%s), max(%s), count(%s)", q, q, q, q)
	}
	b.WriteString(" FROM read_parquet(" + quoteString(path) + ")")
	return b.String()
}

// fromDuck converts a value scanned by duckdb-go.
func fromDuck(v any) (num, error) {
	switch x := v.(type) {
	case nil:
		return num{null: true}, nil
	case *big.Int:
		return num{isInt: true, i: x}, nil
	case int8, int16, int32, int64:
		return num{isInt: true, i: big.NewInt(reflect.ValueOf(x).Int())}, nil
	case uint8, uint16, uint32, uint64:
		return num{isInt: true, i: new(big.Int).SetUint64(reflect.ValueOf(x).Uint())}, nil
	case float32:
		return num{f: float64(x)}, nil
	case float64:
		return num{f: x}, nil
	}
	return num{}, fmt.Errorf("unexpected DuckDB value %v (%T)", v, v)
}

// runDuck runs the query once and returns its result and wall time.
func runDuck(ctx context.Context, db *sql.DB, query string, ncols int) (result, time.Duration, error) {
	vals := make([]any, 1+4*ncols)
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	start := time.Now()
	if err := db.QueryRowContext(ctx, query).Scan(ptrs...); err != nil {
		return result{}, 0, fmt.Errorf("duckdb query: %w", err)
	}
	elapsed := time.Since(start)

	res := result{cols: make([]aggs, ncols)}
	rows, err := fromDuck(vals[0])
	if err != nil || !rows.isInt || !rows.i.IsInt64() {
		return result{}, 0, fmt.Errorf("duckdb count(*): %v %w", rows, err)
	}
	res.rows = rows.i.Int64()
	for c := range ncols {
		var ns [4]num
		for k := range ns {
			if ns[k], err = fromDuck(vals[1+4*c+k]); err != nil {
				return result{}, 0, fmt.Errorf("duckdb column %d: %w", c, err)
			}
		}
		res.cols[c] = aggs{sum: ns[0], min: ns[1], max: ns[2], count: ns[3]}
	}
	return res, elapsed, nil
}

// jsonOutput is the part of arrowagg's JSON output the benchmark reads.
type jsonOutput struct {
	Rows    json.Number  `json:"rows"`
	Columns []jsonColumn `json:"columns"`
}

// jsonColumn is one column of arrowagg's JSON output.
type jsonColumn struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Count any    `json:"count"`
	Sum   any    `json:"sum"`
	Min   any    `json:"min"`
	Max   any    `json:"max"`
}

// fromJSON converts one value of arrowagg's JSON output; float tells how to
// read a number.
func fromJSON(v any, float bool) (num, error) {
	switch x := v.(type) {
	case nil:
		return num{null: true}, nil
	case json.Number:
		if float {
			f, err := strconv.ParseFloat(string(x), 64)
			if err != nil {
				return num{}, fmt.Errorf("float %q: %w", x, err)
			}
			return num{f: f}, nil
		}
		i, ok := new(big.Int).SetString(string(x), 10)
		if !ok {
			return num{}, fmt.Errorf("integer %q: not an integer", x)
		}
		return num{isInt: true, i: i}, nil
	case string:
		switch x {
		case "NaN":
			return num{f: math.NaN()}, nil
		case "Inf":
			return num{f: math.Inf(1)}, nil
		case "-Inf":
			return num{f: math.Inf(-1)}, nil
		}
	}
	return num{}, fmt.Errorf("unexpected JSON value %v (%T)", v, v)
}

// arrowaggRun is one timed run of the arrowagg command.
type arrowaggRun struct {
	wall, cpu time.Duration
	maxRSS    int64 // bytes
}

// runArrowagg runs the command once and returns its result and timings.
func runArrowagg(ctx context.Context, bin string, args []string, threads int, cols []column) (result, arrowaggRun, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(threads))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return result{}, arrowaggRun{}, fmt.Errorf("%s %s: %w: %s", bin, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	run := arrowaggRun{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		run.maxRSS = ru.Maxrss * 1024 // kilobytes on Linux
	}

	var out jsonOutput
	dec := json.NewDecoder(strings.NewReader(stdout.String()))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return result{}, arrowaggRun{}, fmt.Errorf("arrowagg JSON output: %w", err)
	}
	rows, err := strconv.ParseInt(string(out.Rows), 10, 64)
	if err != nil {
		return result{}, arrowaggRun{}, fmt.Errorf("arrowagg JSON rows: %w", err)
	}
	res := result{rows: rows, cols: make([]aggs, len(cols))}
	for i, c := range cols {
		j := slices.IndexFunc(out.Columns, func(o jsonColumn) bool { return o.Name == c.name })
		if j < 0 {
			return result{}, arrowaggRun{}, fmt.Errorf("arrowagg JSON output lacks column %q", c.name)
		}
		o := out.Columns[j]
		var a aggs
		for _, f := range []struct {
			dst   *num
			v     any
			float bool
		}{{&a.count, o.Count, false}, {&a.sum, o.Sum, c.isFloat()}, {&a.min, o.Min, c.isFloat()}, {&a.max, o.Max, c.isFloat()}} {
			if *f.dst, err = fromJSON(f.v, f.float); err != nil {
				return result{}, arrowaggRun{}, fmt.Errorf("arrowagg column %q: %w", c.name, err)
			}
		}
		res.cols[i] = a
	}
	return res, run, nil
}

// sameFloat reports whether a and b are equal, or both NaN.
func sameFloat(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

// compare lists the differences between DuckDB's and arrowagg's results.
func compare(cols []column, duck, agg result, rtol float64) []string {
	var diffs []string
	if duck.rows != agg.rows {
		diffs = append(diffs, fmt.Sprintf("rows: duckdb %d, arrowagg %d", duck.rows, agg.rows))
	}
	for i, c := range cols {
		d, a := duck.cols[i], agg.cols[i]
		check := func(what string, ok bool, dv, av num) {
			if !ok {
				diffs = append(diffs, fmt.Sprintf("%s %s (%s): duckdb %s, arrowagg %s", c.name, what, c.dtype, dv, av))
			}
		}
		for _, p := range []struct {
			what   string
			dv, av num
			isSum  bool
		}{{"count", d.count, a.count, false}, {"sum", d.sum, a.sum, true}, {"min", d.min, a.min, false}, {"max", d.max, a.max, false}} {
			dv, av := p.dv, p.av
			switch {
			case dv.null || av.null:
				check(p.what, dv.null == av.null, dv, av)
			case dv.isInt != av.isInt:
				check(p.what, false, dv, av)
			case dv.isInt:
				check(p.what, dv.i.Cmp(av.i) == 0, dv, av)
			case p.isSum:
				diff := math.Abs(dv.f - av.f)
				check(p.what, sameFloat(dv.f, av.f) || diff <= rtol*math.Max(math.Abs(dv.f), math.Abs(av.f)), dv, av)
			case c.dtype == "FLOAT":
				check(p.what, sameFloat(float64(float32(dv.f)), float64(float32(av.f))), dv, av)
			default:
				check(p.what, sameFloat(dv.f, av.f), dv, av)
			}
		}
	}
	return diffs
}

// stats summarises repeated timings.
type stats struct{ median, min time.Duration }

func summarize(ds []time.Duration) stats {
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return stats{median: med, min: s[0]}
}

// processCPU is this process's user+system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuModel is the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// loadAvg is the first three fields of /proc/loadavg.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// memTotal is MemTotal of /proc/meminfo, formatted.
func memTotal() string {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return fmt.Sprintf("%.1f GiB RAM", float64(kb)/(1<<20))
			}
		}
	}
	return "?"
}

type config struct {
	path     string
	bin      string
	threads  int
	reps     int
	rtol     float64
	extraArg string
}

func run(ctx context.Context, cfg config, w io.Writer) error {
	st, err := os.Stat(cfg.path)
	if err != nil {
		return fmt.Errorf("benchmark file: %w", err)
	}
	pf, err := file.OpenParquetFile(cfg.path, false)
	if err != nil {
		return fmt.Errorf("open %s: %w", cfg.path, err)
	}
	rowGroups, fileRows := pf.NumRowGroups(), pf.NumRows()
	if err := pf.Close(); err != nil {
		return fmt.Errorf("close %s: %w", cfg.path, err)
	}

	db, err := sql.Open("duckdb", "")
	if err != nil {
		return fmt.Errorf("open duckdb: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, fmt.Sprintf("SET threads TO %d", cfg.threads)); err != nil {
		return fmt.Errorf("duckdb: set threads: %w", err)
	}
	var duckVersion string
	if err := db.QueryRowContext(ctx, "SELECT version()").Scan(&duckVersion); err != nil {
		return fmt.Errorf("duckdb version: %w", err)
	}
	cols, err := numericColumns(ctx, db, cfg.path)
	if err != nil {
		return err
	}
	query := duckQuery(cfg.path, cols)

	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	args := []string{"--format", "json", "--device", "cpu", "--threads", strconv.Itoa(cfg.threads),
		"--progress", "never", "--aggs", "sum,min,max,count", "--columns", strings.Join(names, ",")}
	if cfg.extraArg != "" {
		args = append(args, strings.Fields(cfg.extraArg)...)
	}
	args = append(args, cfg.path)
	version := "?"
	if out, err := exec.CommandContext(ctx, cfg.bin, "--version").Output(); err == nil {
		version = strings.TrimSpace(string(out))
	}

	loadBefore := loadAvg()
	// Warm-up runs: fill the page cache and check the results.
	fmt.Fprintf(os.Stderr, "benchcmp: warm-up (%d columns, %d threads)\n", len(cols), cfg.threads)
	duckRes, _, err := runDuck(ctx, db, query, len(cols))
	if err != nil {
		return err
	}
	aggRes, _, err := runArrowagg(ctx, cfg.bin, args, cfg.threads, cols)
	if err != nil {
		return err
	}
	if fileRows != duckRes.rows {
		return fmt.Errorf("duckdb counted %d rows, the Parquet footer says %d", duckRes.rows, fileRows)
	}
	diffs := compare(cols, duckRes, aggRes, cfg.rtol)

	var duckWall, duckCPU, aggWall, aggCPU []time.Duration
	var aggRSS int64
	for r := range cfg.reps {
		c0 := processCPU()
		_, d, err := runDuck(ctx, db, query, len(cols))
		if err != nil {
			return err
		}
		duckWall, duckCPU = append(duckWall, d), append(duckCPU, processCPU()-c0)
		_, a, err := runArrowagg(ctx, cfg.bin, args, cfg.threads, cols)
		if err != nil {
			return err
		}
		aggWall, aggCPU = append(aggWall, a.wall), append(aggCPU, a.cpu)
		aggRSS = max(aggRSS, a.maxRSS)
		fmt.Fprintf(os.Stderr, "benchcmp: rep %d/%d: duckdb %.3fs, arrowagg %.3fs\n", r+1, cfg.reps, d.Seconds(), a.wall.Seconds())
	}
	dw, dc, aw, ac := summarize(duckWall), summarize(duckCPU), summarize(aggWall), summarize(aggCPU)

	loadAfter := loadAvg()
	host, _ := os.Hostname()
	gib := float64(st.Size()) / (1 << 30)
	fmt.Fprintf(w, "machine:  %s; %d CPUs (nproc), %s, %s, %s/%s\n", host, runtime.NumCPU(), cpuModel(), memTotal(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(w, "date:     %s\n", time.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "file:     %s: %.2f GiB (%d bytes), %d rows, %d row groups, %d numeric columns\n", cfg.path, gib, st.Size(), fileRows, rowGroups, len(cols))
	fmt.Fprintf(w, "threads:  %d\n", cfg.threads)
	fmt.Fprintf(w, "load:     %s before, %s after (1/5/15-minute load averages; other work on the machine skews wall times)\n", loadBefore, loadAfter)
	fmt.Fprintf(w, "duckdb:   %s via duckdb-go v2.10506.0, in process, query wall time: SET threads TO %d; SELECT count(*), sum(c), min(c), max(c), count(c) for each column FROM read_parquet(...)\n", duckVersion, cfg.threads)
	fmt.Fprintf(w, "arrowagg: %s; process wall time: GOMAXPROCS=%d %s %s\n", version, cfg.threads, cfg.bin, strings.Join(args, " "))
	if len(diffs) == 0 {
		fmt.Fprintf(w, "results:  identical (rows; count, sum, min, max of %d columns; float sums within rtol %g)\n", len(cols), cfg.rtol)
	} else {
		fmt.Fprintf(w, "results:  %d DIFFERENCES:\n", len(diffs))
		for _, d := range diffs {
			fmt.Fprintf(w, "  %s\n", d)
		}
	}
	fmt.Fprintf(w, "\n| engine   | reps | median s | min s  | median GiB/s | median CPU s |\n")
	fmt.Fprintf(w, "|----------|------|----------|--------|--------------|--------------|\n")
	for _, e := range []struct {
		name string
		wall stats
		cpu  stats
	}{{"DuckDB", dw, dc}, {"arrowagg", aw, ac}} {
		fmt.Fprintf(w, "| %-8s | %4d | %8.3f | %6.3f | %12.2f | %12.2f |\n",
			e.name, cfg.reps, e.wall.median.Seconds(), e.wall.min.Seconds(), gib/e.wall.median.Seconds(), e.cpu.median.Seconds())
	}
	fmt.Fprintf(w, "\narrowagg peak RSS over the runs: %.0f MiB\n", float64(aggRSS)/(1<<20))
	ratio := dw.median.Seconds() / aw.median.Seconds()
	fmt.Fprintf(w, "ratio DuckDB/arrowagg: median %.2f, min %.2f (>= 1.0: arrowagg at least as fast)\n",
		ratio, dw.min.Seconds()/aw.min.Seconds())
	fmt.Fprintf(w, "CPU-time ratio DuckDB/arrowagg (median user+system seconds): %.2f\n", dc.median.Seconds()/ac.median.Seconds())
	fmt.Fprintf(w, "ratio=%.2f\n", ratio)
	if len(diffs) > 0 {
		return errors.New("results differ")
	}
	return nil
}

func main() {
	var cfg config
	flag.StringVar(&cfg.path, "file", "bench/data/bench-1g.parquet", "Parquet file to aggregate")
	flag.StringVar(&cfg.bin, "arrowagg", "bin/arrowagg", "arrowagg binary")
	flag.IntVar(&cfg.threads, "threads", runtime.NumCPU(), "threads for both engines")
	flag.IntVar(&cfg.reps, "reps", 5, "timed repetitions of each engine (after one warm-up run each)")
	flag.Float64Var(&cfg.rtol, "rtol", 1e-9, "relative tolerance for float sums")
	flag.StringVar(&cfg.extraArg, "arrowagg-args", "", "extra arguments for arrowagg, space-separated")
	flag.Parse()
	if flag.NArg() != 0 || cfg.threads < 1 || cfg.reps < 1 {
		fmt.Fprintln(os.Stderr, "usage: benchcmp [-file F] [-arrowagg BIN] [-threads N] [-reps R] [-rtol X]")
		os.Exit(2)
	}
	if err := run(context.Background(), cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchcmp:", err)
		os.Exit(1)
	}
}
