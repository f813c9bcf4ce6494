// Command groupduck runs arrowagg's grouped aggregation in DuckDB, as one
// process, and writes DuckDB's answer as CSV with arrowagg's header, for
// scripts/bench-groupby.sh to time and compare:
//
//	groupduck -group-by k1,k2 [-c i32,i64] [-a count,sum,min,max] [-where 'sel < 50'] [-threads N] [-o OUT.csv] FILE
//
// is
//
//	COPY (SELECT k1, k2, count(*) AS count_all, count(i32) AS i32_count, sum(i32) AS i32_sum, ...
//	      FROM read_parquet(FILE) [WHERE ...] GROUP BY k1, k2 ORDER BY k1 NULLS LAST, k2 NULLS LAST)
//	TO OUT (FORMAT csv, HEADER)
//
// the columns in arrowagg's order (the keys, count_all, then each column's
// aggregates in agg's output order) under arrowagg's names. The aggregates
// are DuckDB's: count, null_count (count(*) - count(c)), sum, min, max,
// mean (avg), stddev (stddev_samp), variance (var_samp), and the ordered
// ones in row order of the file (read_parquet's file_row_number): first
// and last (of the non-null values), arg_min and arg_max (the row of the
// least or greatest value, the earliest on ties). approx_distinct has no
// counterpart that gives the same estimate. The where clause is DuckDB's
// SQL, given as is. FILE is anything read_parquet takes (a glob too).
//
// -o - (the default) writes to standard output; -v prints the query and its
// wall time on standard error.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" database/sql driver

	"github.com/arrowagg/arrowagg/agg"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "groupduck:", err)
		os.Exit(1)
	}
}

// request is a grouped query.
type request struct {
	file    string
	keys    []string
	columns []string
	aggs    agg.Set
	where   string
}

func run(ctx context.Context, args []string, stderr io.Writer) (err error) {
	fs := flag.NewFlagSet("groupduck", flag.ExitOnError)
	groupBy := fs.String("group-by", "", "key columns, comma-separated (required)")
	cols := fs.String("c", "", "columns to aggregate, comma-separated (default: none, count_all alone)")
	aggs := fs.String("a", "count,null_count,sum,min,max,mean", "aggregates, comma-separated, as arrowagg -a takes them")
	where := fs.String("where", "", "a DuckDB SQL condition on the rows")
	threads := fs.Int("threads", 0, "DuckDB threads (0: its default, every CPU)")
	out := fs.String("o", "-", "the CSV file to write (-: standard output)")
	verbose := fs.Bool("v", false, "print the query and its time on standard error")
	fs.Parse(args)
	if fs.NArg() != 1 || *groupBy == "" {
		fmt.Fprintln(stderr, "usage: groupduck -group-by K1,K2 [-c COLS] [-a AGGS] [-where COND] [-threads N] [-o OUT.csv] FILE")
		fs.PrintDefaults()
		os.Exit(2)
	}
	set, err := agg.Parse(*aggs)
	if err != nil {
		return fmt.Errorf("-a: %w", err)
	}
	req := request{file: fs.Arg(0), keys: split(*groupBy), columns: split(*cols), aggs: agg.Normalize(set), where: *where}
	q, err := req.query()
	if err != nil {
		return err
	}
	dest := *out
	if dest == "-" {
		// DuckDB opens the path it writes: /dev/stdout would be a file of its
		// own (at offset 0) when standard output is one. A temporary file
		// is copied out instead.
		tmp, err := os.CreateTemp("", "groupduck-*.csv")
		if err != nil {
			return err
		}
		dest = tmp.Name()
		tmp.Close()
		defer os.Remove(dest)
		defer func() {
			if err == nil {
				err = copyOut(os.Stdout, dest)
			}
		}()
	}
	q = fmt.Sprintf("COPY (%s) TO %s (FORMAT csv, HEADER)", q, quoteString(dest))
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
	if _, err = db.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("duckdb: %s: %w", q, err)
	}
	if *verbose {
		fmt.Fprintf(stderr, "groupduck: %s: %.3fs\n", q, time.Since(start).Seconds())
	}
	return nil
}

// copyOut copies the file at path to w.
func copyOut(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

func split(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// query is the SELECT of the request.
func (r request) query() (string, error) {
	if len(r.keys) == 0 {
		return "", fmt.Errorf("-group-by: no key column")
	}
	if r.aggs.Any(agg.ApproxDistinct) {
		return "", fmt.Errorf("-a: approx_distinct has no DuckDB counterpart giving arrowagg's estimate")
	}
	keys := make([]string, len(r.keys))
	order := make([]string, len(r.keys))
	for i, k := range r.keys {
		keys[i] = quoteIdent(k)
		order[i] = keys[i] + " NULLS LAST"
	}
	sel := append(append([]string{}, keys...), "count(*) AS count_all")
	const row = "file_row_number"
	for _, c := range r.columns {
		q := quoteIdent(c)
		for _, a := range agg.Each() {
			if !r.aggs.Has(a) {
				continue
			}
			var e string
			switch a {
			case agg.Count:
				e = "count(" + q + ")"
			case agg.NullCount:
				e = "count(*) - count(" + q + ")"
			case agg.Sum:
				e = "sum(" + q + ")"
			case agg.Min:
				e = "min(" + q + ")"
			case agg.Max:
				e = "max(" + q + ")"
			case agg.Mean:
				e = "avg(" + q + ")"
			case agg.Stddev:
				e = "stddev_samp(" + q + ")"
			case agg.Variance:
				e = "var_samp(" + q + ")"
			case agg.First:
				e = fmt.Sprintf("first(%s ORDER BY %s) FILTER (WHERE %s IS NOT NULL)", q, row, q)
			case agg.Last:
				e = fmt.Sprintf("last(%s ORDER BY %s) FILTER (WHERE %s IS NOT NULL)", q, row, q)
			case agg.ArgMin: // the least (value, row): the earliest row on ties
				e = fmt.Sprintf("arg_min(%s, (%s, %s)) FILTER (WHERE %s IS NOT NULL)", row, q, row, q)
			case agg.ArgMax: // the greatest (value, -row)
				e = fmt.Sprintf("arg_max(%s, (%s, -%s)) FILTER (WHERE %s IS NOT NULL)", row, q, row, q)
			default:
				return "", fmt.Errorf("-a: %s: no DuckDB counterpart here", a)
			}
			sel = append(sel, e+" AS "+quoteIdent(c+"_"+a.Name()))
		}
	}
	src := "read_parquet(" + quoteString(r.file) + ")"
	if r.aggs.Any(agg.Ordered) && len(r.columns) > 0 {
		src = "read_parquet(" + quoteString(r.file) + ", file_row_number = true)"
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM " + src
	if r.where != "" {
		q += " WHERE (" + r.where + ")"
	}
	q += " GROUP BY " + strings.Join(keys, ", ") + " ORDER BY " + strings.Join(order, ", ")
	return q, nil
}

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
func quoteIdent(s string) string  { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
