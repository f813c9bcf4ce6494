// Command duckfiles writes the Parquet files of the file benchmark
// (scripts/bench-files.sh) with DuckDB, and runs DuckDB's side of it.
//
//	duckfiles write -rows 50000000 -o duck-zstd.parquet
//	duckfiles write -from pyarrow.parquet -o duck-zstd.parquet -options 'ROW_GROUP_SIZE 1000000'
//	duckfiles query [-threads N] FILE
//	duckfiles info FILE
//	duckfiles writers -o testdata/writers/duckdb
//
// write makes the benchmark's data (four columns i32, int64 i64, float64
// f64 with 5% nulls, float32 f32; row i a function of i alone: data.go),
// or reads it from a Parquet file (-from), and has DuckDB write it as
// DuckDB writes Parquet:
//
//	COPY (SELECT * FROM read_parquet(SRC)) TO OUT (FORMAT parquet, COMPRESSION zstd [, OPTIONS])
//
// with DuckDB's defaults for everything not given. The generated data goes
// through an uncompressed Parquet file next to OUT, removed afterwards
// (-keep-gen keeps it under a name of its own).
//
// query opens an in-memory DuckDB and runs, over every numeric column,
//
//	SELECT count(*), count(c), sum(c), min(c), max(c), ... FROM read_parquet(FILE)
//
// and prints the answer as one JSON object on stdout: "rows", "seconds"
// (the query's wall time; the whole process is timed by the script),
// "version", and "columns", each {"name", "type", "count", "sum", "min",
// "max"}, integers exact, floats in their shortest form (float32 values as
// float32).
//
// writers writes a small table with every codec DuckDB offers, in Parquet
// versions V1 and V2, and DuckDB's answers for each file beside them
// (writers.go), for arrowagg's tests.
//
// info prints what DuckDB's parquet_metadata says of a file's layout: per
// column its row groups, rows per row group, pages' encodings, compression
// and sizes.
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
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"time"

	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" database/sql driver
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "write":
		err = cmdWrite(ctx, os.Args[2:])
	case "query":
		err = cmdQuery(ctx, os.Args[2:], os.Stdout)
	case "writers":
		err = cmdWriters(ctx, os.Args[2:])
	case "info":
		err = cmdInfo(ctx, os.Args[2:], os.Stdout)
	case "-h", "-help", "--help", "help":
		usage()
	default:
		fmt.Fprintf(os.Stderr, "duckfiles: unknown command %q\n", os.Args[1])
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "duckfiles:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  duckfiles write [-rows N | -from SRC.parquet] [-compression zstd] [-options 'K V, ...'] [-threads N] -o OUT.parquet
  duckfiles query [-threads N] FILE
  duckfiles info FILE
  duckfiles writers -o DIR
`)
	os.Exit(2)
}

// openDB opens an in-memory DuckDB with threads threads (0: DuckDB's
// default, every CPU).
func openDB(ctx context.Context, threads int) (*sql.DB, error) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, fmt.Errorf("open duckdb: %w", err)
	}
	db.SetMaxOpenConns(1) // one connection: the SET holds for the queries
	if threads > 0 {
		if _, err := db.ExecContext(ctx, fmt.Sprintf("SET threads TO %d", threads)); err != nil {
			db.Close()
			return nil, fmt.Errorf("duckdb: set threads: %w", err)
		}
	}
	return db, nil
}

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
func quoteIdent(s string) string  { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func cmdWrite(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("write", flag.ExitOnError)
	out := fs.String("o", "", "the Parquet file to write (required)")
	rows := fs.Int64("rows", 50_000_000, "rows of generated data")
	from := fs.String("from", "", "write this Parquet file's rows instead of generated ones")
	compression := fs.String("compression", "zstd", "COPY's COMPRESSION")
	options := fs.String("options", "", "more COPY options, as COPY takes them ('ROW_GROUP_SIZE 1000000, PARQUET_VERSION v2')")
	threads := fs.Int("threads", 0, "DuckDB threads (0: its default)")
	keepGen := fs.String("keep-gen", "", "keep the generated uncompressed Parquet file under this name")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "generator goroutines")
	fs.Parse(args)
	if *out == "" || fs.NArg() != 0 {
		fs.Usage()
		os.Exit(2)
	}
	src := *from
	if src == "" {
		if *rows <= 0 {
			return fmt.Errorf("-rows %d: want more than 0", *rows)
		}
		src = *keepGen
		if src == "" {
			src = *out + ".gen.parquet"
			defer os.Remove(src)
		}
		start := time.Now()
		if err := writeGenerated(ctx, src, *rows, *workers); err != nil {
			return fmt.Errorf("generating %s: %w", src, err)
		}
		fmt.Fprintf(os.Stderr, "duckfiles: generated %d rows in %.1fs\n", *rows, time.Since(start).Seconds())
	}
	db, err := openDB(ctx, *threads)
	if err != nil {
		return err
	}
	defer db.Close()
	opts := "FORMAT parquet, COMPRESSION " + *compression
	if *options != "" {
		opts += ", " + *options
	}
	q := fmt.Sprintf("COPY (SELECT * FROM read_parquet(%s)) TO %s (%s)", quoteString(src), quoteString(*out), opts)
	start := time.Now()
	if _, err := db.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	fmt.Fprintf(os.Stderr, "duckfiles: %s: %.1fs\n", q, time.Since(start).Seconds())
	return nil
}

// column is a numeric column of a file, as DuckDB types it.
type column struct {
	name, dtype string
}

var numericTypes = map[string]bool{
	"TINYINT": true, "SMALLINT": true, "INTEGER": true, "BIGINT": true, "HUGEINT": true,
	"UTINYINT": true, "USMALLINT": true, "UINTEGER": true, "UBIGINT": true, "FLOAT": true, "DOUBLE": true,
}

func numericColumns(ctx context.Context, db *sql.DB, path string) ([]column, error) {
	rows, err := db.QueryContext(ctx, "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet("+quoteString(path)+"))")
	if err != nil {
		return nil, fmt.Errorf("describe: %w", err)
	}
	defer rows.Close()
	var cols []column
	for rows.Next() {
		var c column
		if err := rows.Scan(&c.name, &c.dtype); err != nil {
			return nil, err
		}
		if numericTypes[c.dtype] {
			cols = append(cols, c)
		}
	}
	return cols, rows.Err()
}

// jsonValue turns a value DuckDB returned into a JSON value: integers
// exact, floats shortest (float32 as float32), non-finite floats as the
// strings arrowagg prints ("NaN", "Inf", "-Inf").
func jsonValue(v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case *big.Int:
		return json.Number(x.String()), nil
	case int8, int16, int32, int64, uint8, uint16, uint32, uint64, int, uint:
		return json.Number(fmt.Sprint(x)), nil
	case float32:
		return floatJSON(float64(x), 32), nil
	case float64:
		return floatJSON(x, 64), nil
	}
	return nil, fmt.Errorf("unexpected DuckDB value %v (%T)", v, v)
}

func floatJSON(f float64, bits int) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, bits))
}

type columnJSON struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Count any    `json:"count"`
	Sum   any    `json:"sum"`
	Min   any    `json:"min"`
	Max   any    `json:"max"`
}

type queryJSON struct {
	Rows    any          `json:"rows"`
	Seconds float64      `json:"seconds"`
	Version string       `json:"version"`
	Columns []columnJSON `json:"columns"`
}

func cmdQuery(ctx context.Context, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("query", flag.ExitOnError)
	threads := fs.Int("threads", 0, "DuckDB threads (0: its default, every CPU)")
	fs.Parse(args)
	if fs.NArg() != 1 {
		fs.Usage()
		os.Exit(2)
	}
	path := fs.Arg(0)
	if _, err := os.Stat(path); err != nil {
		return err
	}
	db, err := openDB(ctx, *threads)
	if err != nil {
		return err
	}
	defer db.Close()
	var out queryJSON
	if err := db.QueryRowContext(ctx, "SELECT version()").Scan(&out.Version); err != nil {
		return fmt.Errorf("duckdb version: %w", err)
	}
	cols, err := numericColumns(ctx, db, path)
	if err != nil {
		return err
	}
	var q strings.Builder
	q.WriteString("SELECT count(*)")
	for _, c := range cols {
		n := quoteIdent(c.name)
		fmt.Fprintf(&q, ", count(%s), sum(%s), min(%s), max(%s)", n, n, n, n)
	}
	q.WriteString(" FROM read_parquet(" + quoteString(path) + ")")
	vals := make([]any, 1+4*len(cols))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	start := time.Now()
	if err := db.QueryRowContext(ctx, q.String()).Scan(ptrs...); err != nil {
		return fmt.Errorf("duckdb query: %w", err)
	}
	out.Seconds = time.Since(start).Seconds()
	conv := func(v any) any {
		if err == nil {
			var j any
			j, err = jsonValue(v)
			return j
		}
		return nil
	}
	out.Rows = conv(vals[0])
	for i, c := range cols {
		k := 1 + 4*i
		out.Columns = append(out.Columns, columnJSON{Name: c.name, Type: c.dtype,
			Count: conv(vals[k]), Sum: conv(vals[k+1]), Min: conv(vals[k+2]), Max: conv(vals[k+3])})
	}
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	return enc.Encode(out)
}

func cmdInfo(ctx context.Context, args []string, w io.Writer) error {
	if len(args) != 1 {
		usage()
	}
	db, err := openDB(ctx, 0)
	if err != nil {
		return err
	}
	defer db.Close()
	q := `SELECT path_in_schema, count(*), sum(num_values), min(num_values), max(num_values),
		string_agg(DISTINCT encodings, ' '), string_agg(DISTINCT compression, ' '),
		sum(total_compressed_size), sum(total_uncompressed_size), count(dictionary_page_offset)
		FROM parquet_metadata(` + quoteString(args[0]) + `) GROUP BY path_in_schema ORDER BY min(column_id)`
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("parquet_metadata: %w", err)
	}
	defer rows.Close()
	fmt.Fprintln(w, "column\trow groups\tvalues\tmin/rg\tmax/rg\tencodings\tcompression\tcompressed\tuncompressed\twith dictionary")
	for rows.Next() {
		var name, encs, comp string
		var rgs, vals, lo, hi, csize, usize, dicts int64
		if err := rows.Scan(&name, &rgs, &vals, &lo, &hi, &encs, &comp, &csize, &usize, &dicts); err != nil {
			return err
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t%d\t%d\t%d\n", name, rgs, vals, lo, hi, encs, comp, csize, usize, dicts)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	var created string
	if err := db.QueryRowContext(ctx, "SELECT created_by FROM parquet_file_metadata("+quoteString(args[0])+")").Scan(&created); err != nil {
		return errors.Join(errors.New("parquet_file_metadata"), err)
	}
	fmt.Fprintln(w, "created by:", created)
	return nil
}
