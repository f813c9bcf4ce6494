// Command groupgen writes the Parquet file of the grouped-aggregation
// benchmark (scripts/bench-groupby.sh) with DuckDB:
//
//	groupgen [-rows 100000000] [-threads N] [-options 'ROW_GROUP_SIZE 1048576'] -o groups.parquet
//
// DuckDB makes the rows and writes them in one statement,
//
//	COPY (SELECT ... FROM range(N)) TO OUT (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 1048576)
//
// (-print prints it instead). Row i is a function of i and N alone (data.go
// says which), the same for every DuckDB version and thread count:
//
//	k10, k1k, k1m, k50m  int64, exactly 10, 1000, 10^6 and min(5*10^7, N/2)
//	                     distinct values (N of them when N is fewer)
//	s1k                  utf8, exactly 1000 distinct values ("s000" to "s999")
//	i32, i64, f64        int32, int64, float64, each null in about 5% of rows
//	sel                  int32 in [0, 100): sel < p keeps about p% of rows
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" database/sql driver
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "groupgen:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("groupgen", flag.ExitOnError)
	out := fs.String("o", "", "the Parquet file to write (required unless -print)")
	rows := fs.Int64("rows", 100_000_000, "rows to write")
	threads := fs.Int("threads", 0, "DuckDB threads (0: its default, every CPU)")
	compression := fs.String("compression", "snappy", "COPY's COMPRESSION")
	options := fs.String("options", "ROW_GROUP_SIZE 1048576", "more COPY options, as COPY takes them")
	print := fs.Bool("print", false, "print the COPY statement instead of running it")
	fs.Parse(args)
	if fs.NArg() != 0 || (*out == "" && !*print) {
		fs.Usage()
		os.Exit(2)
	}
	sel, err := selectSQL(*rows)
	if err != nil {
		return err
	}
	opts := "FORMAT parquet, COMPRESSION " + *compression
	if *options != "" {
		opts += ", " + *options
	}
	q := fmt.Sprintf("COPY (%s) TO %s (%s)", sel, quoteString(*out), opts)
	if *print {
		fmt.Println(q + ";")
		return nil
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return fmt.Errorf("open duckdb: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one connection: the SET holds for the COPY
	if *threads > 0 {
		if _, err := db.ExecContext(ctx, fmt.Sprintf("SET threads TO %d", *threads)); err != nil {
			return fmt.Errorf("duckdb: set threads: %w", err)
		}
	}
	start := time.Now()
	if _, err := db.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("duckdb: writing %s: %w", *out, err)
	}
	fmt.Fprintf(os.Stderr, "groupgen: %d rows to %s in %.1fs\n", *rows, *out, time.Since(start).Seconds())
	return nil
}
