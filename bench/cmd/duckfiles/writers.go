package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// The writers subcommand: a small table written by DuckDB with each codec
// it offers, in both of its Parquet versions, and DuckDB's own answers for
// each file, for arrowagg's tests (testdata/writers/duckdb):
//
//	duckfiles writers -o testdata/writers/duckdb
//
// The table's row i (i = 0..writerRows-1) is a function of i alone,
// computed by DuckDB's SQL (writersTable); every column has nulls. The
// floats are integers over a power of two, small enough that every sum of
// them is exact in float64 in any order: DuckDB's sum of a double is plain
// addition, which here gives the exact sum (the command checks it against
// the sum of the values cast to DECIMAL(38,10)), so an exact comparison
// with arrowagg's compensated sum is meaningful.

// writerRows is the rows of the table, written as row groups of
// writerGroup rows (DuckDB ends a row group at the end of a chunk of its
// input: the COPY reads the groups as a UNION ALL of one SELECT each).
const (
	writerRows  = 640
	writerGroup = 256
)

// writersTable makes the table t: its column i orders the rows and is not
// written. Most values are a small pseudo-random integer k (|k| < 2^15)
// times a constant, so that the compressed files stay small while the
// values span their types (the int64 values reach within 2^48 of their
// bounds and their sums pass 2^63, the uint64 values reach 2^64-1, the
// DECIMAL(38,10) values' unscaled integers pass 2^64).
var writersTable = `CREATE TABLE t AS SELECT i,
  CASE WHEN i % 23 = 5 THEN NULL ELSE (((i * 2654435761) % 65521 - 32760) * 65536 + i % 16)::INTEGER END AS i32,
  CASE WHEN i % 29 = 7 THEN NULL ELSE ((i % 13) * 1000 - 6000)::INTEGER END AS i32_dict,
  CASE WHEN i % 17 = 8 THEN NULL ELSE ((i * 7919) % 65521 - 32760)::SMALLINT END AS i16,
  CASE WHEN i % 31 = 2 THEN NULL ELSE ((i * 40503) % 65521 - 32760) * 281474976710656 + i % 16 END AS i64,
  CASE WHEN i % 37 = 1 THEN NULL ELSE 18446744073709551615::UBIGINT - ((i * 69621) % 65521)::UBIGINT * 281474976710656::UBIGINT - (i % 16)::UBIGINT END AS u64,
  CASE WHEN i % 41 = 3 THEN NULL ELSE ((i * 48271) % 65521 - 32760)::DOUBLE / 64 END AS f64,
  CASE WHEN i % 43 = 6 THEN NULL ELSE ((i % 7) - 3)::DOUBLE / 4 END AS f64_dict,
  CASE WHEN i % 13 = 4 THEN NULL ELSE (((i * 69621) % 65521 - 32760)::DOUBLE / 8)::FLOAT END AS f32,
  CASE WHEN i % 43 = 0 THEN NULL WHEN i % 101 = 50 THEN 'ü' || i::VARCHAR WHEN i % 97 = 11 THEN ''
       ELSE 'v' || ((i * 2654435761) % 10007)::VARCHAR END AS s,
  CASE i % 6 WHEN 0 THEN 'red' WHEN 1 THEN 'green' WHEN 2 THEN 'blue' WHEN 3 THEN NULL WHEN 4 THEN 'cyan' ELSE 'magenta' END AS s_dict,
  CASE WHEN i % 19 = 0 THEN NULL ELSE (i * 7) % 3 = 0 END AS b,
  CASE WHEN i % 47 = 4 THEN NULL ELSE ((((i * 2654435761) % 65521 - 32760) * 16384 + i % 16) * 0.01)::DECIMAL(9,2) END AS dec9,
  CASE WHEN i % 53 = 5 THEN NULL ELSE ((((i * 40503) % 65521 - 32760) * 17179869184 + i % 16) * 0.0001)::DECIMAL(18,4) END AS dec18,
  CASE WHEN i % 59 = 6 THEN NULL ELSE (h // 10000000000)::VARCHAR || '.' || lpad(abs(h % 10000000000)::VARCHAR, 10, '0') END::DECIMAL(38,10) AS dec38,
  CASE WHEN i % 61 = 7 THEN NULL ELSE DATE '1900-01-01' + ((i * 2654435761) % 73049)::INTEGER END AS d,
  CASE WHEN i % 67 = 8 THEN NULL ELSE make_timestamp(((i * 2654435761) % 65521 - 32760) * 68719476736 + i % 16) END AS ts,
  CASE WHEN i % 71 = 9 THEN NULL ELSE make_timestamp((((i * 40503) % 65521 - 32760) * 1073741824 + i % 16) * 1000)::TIMESTAMP_MS END AS ts_ms,
  CASE WHEN i % 73 = 10 THEN NULL ELSE make_timestamp(((i * 69621) % 65521) * 4294967296 + i % 16)::TIMESTAMPTZ END AS tstz
FROM (SELECT i, ((i * 48271) % 65521 - 32760)::HUGEINT * '1208925819614629174706176'::HUGEINT + i % 16 AS h
      FROM range(` + strconv.Itoa(writerRows) + `) r(i)) ORDER BY i`

// writerCodecs are the codecs DuckDB writes (its lz4 is LZ4_RAW).
var writerCodecs = []string{"uncompressed", "snappy", "gzip", "zstd", "lz4_raw", "brotli"}

// writersExpect is the expectations file, expected.json: DuckDB's
// answers, the same for every file (the command checks it), and what each
// file is.
type writersExpect struct {
	Version string          `json:"duckdb_version"`
	Rows    int64           `json:"rows"`
	Columns []writersColumn `json:"columns"`
	Files   []writersFile   `json:"files"`
}

// writersFile is a file: its codec, Parquet version, and per column the
// encodings DuckDB's parquet_metadata reports of its pages.
type writersFile struct {
	File        string            `json:"file"`
	Compression string            `json:"compression"`
	Version     string            `json:"parquet_version"`
	Encodings   map[string]string `json:"encodings"`
}

// writersColumn is DuckDB's answer for a column: count, null_count, sum
// (null where arrowagg has none: strings, dates, timestamps), min and max
// as arrowagg's JSON prints them, as strings (floats in Go's shortest
// form, a FLOAT column's min and max as float32, to be compared as
// numbers).
type writersColumn struct {
	Name      string  `json:"name"`
	Type      string  `json:"duckdb_type"`
	Count     string  `json:"count"`
	NullCount string  `json:"null_count"`
	Sum       *string `json:"sum"`
	Min       *string `json:"min"`
	Max       *string `json:"max"`
}

func cmdWriters(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("writers", flag.ExitOnError)
	dir := fs.String("o", "", "the folder to write the files and expected.json into (required)")
	fs.Parse(args)
	if *dir == "" || fs.NArg() != 0 {
		fs.Usage()
		os.Exit(2)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	db, err := openDB(ctx, 1) // one thread: rows in order, the same files every run
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "SET TimeZone = 'UTC'"); err != nil {
		return fmt.Errorf("duckdb: set time zone: %w", err)
	}
	var out writersExpect
	if err := db.QueryRowContext(ctx, "SELECT version()").Scan(&out.Version); err != nil {
		return fmt.Errorf("duckdb version: %w", err)
	}
	if _, err := db.ExecContext(ctx, writersTable); err != nil {
		return fmt.Errorf("making the table: %w", err)
	}
	var parts []string
	for lo := 0; lo < writerRows; lo += writerGroup {
		parts = append(parts, fmt.Sprintf("SELECT * EXCLUDE (i) FROM t WHERE i >= %d AND i < %d", lo, lo+writerGroup))
	}
	groups := strings.Join(parts, " UNION ALL ")
	for _, version := range []string{"V1", "V2"} {
		for _, codec := range writerCodecs {
			name := fmt.Sprintf("duckdb-%s-%s.parquet", strings.ToLower(version), codec)
			path := filepath.Join(*dir, name)
			q := fmt.Sprintf("COPY (%s) TO %s (FORMAT parquet, COMPRESSION %s, PARQUET_VERSION %s, ROW_GROUP_SIZE %d)",
				groups, quoteString(path), codec, version, writerGroup)
			if _, err := db.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
			rows, cols, err := answers(ctx, db, path)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if out.Columns == nil {
				out.Rows, out.Columns = rows, cols
			} else if !reflect.DeepEqual(cols, out.Columns) || rows != out.Rows {
				return fmt.Errorf("%s: DuckDB's answers differ from those of %s", name, out.Files[0].File)
			}
			encs, err := encodings(ctx, db, path)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			out.Files = append(out.Files, writersFile{File: name, Compression: codec, Version: version, Encodings: encs})
			fmt.Fprintf(os.Stderr, "duckfiles: %s\n", q)
		}
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(*dir, "expected.json"), append(b, '\n'), 0o644)
}

// answers asks DuckDB for the count, null_count, sum, min and max of each
// column of the file at path.
func answers(ctx context.Context, db *sql.DB, path string) (nrows int64, cols []writersColumn, err error) {
	src := "read_parquet(" + quoteString(path) + ")"
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+src).Scan(&nrows); err != nil {
		return 0, nil, err
	}
	rows, err := db.QueryContext(ctx, "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM "+src+")")
	if err != nil {
		return 0, nil, fmt.Errorf("describe: %w", err)
	}
	for rows.Next() {
		var c writersColumn
		if err := rows.Scan(&c.Name, &c.Type); err != nil {
			rows.Close()
			return 0, nil, err
		}
		cols = append(cols, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, nil, err
	}
	for i := range cols {
		c := &cols[i]
		n := quoteIdent(c.Name)
		var sum, lo, hi string
		float := c.Type == "DOUBLE" || c.Type == "FLOAT"
		switch {
		case float:
			sum, lo, hi = "sum("+n+")", "min("+n+")", "max("+n+")"
		case c.Type == "BOOLEAN":
			sum, lo, hi = "sum("+n+"::INTEGER)::VARCHAR", "min("+n+")::VARCHAR", "max("+n+")::VARCHAR"
		case c.Type == "VARCHAR", c.Type == "DATE":
			sum, lo, hi = "NULL", "min("+n+")::VARCHAR", "max("+n+")::VARCHAR"
		case strings.HasPrefix(c.Type, "TIMESTAMP"):
			// Microseconds since the epoch, printed below as RFC 3339.
			sum, lo, hi = "NULL", "epoch_us(min("+n+"))::VARCHAR", "epoch_us(max("+n+"))::VARCHAR"
		default: // integers and decimals: DuckDB prints them exactly
			sum, lo, hi = "sum("+n+")::VARCHAR", "min("+n+")::VARCHAR", "max("+n+")::VARCHAR"
		}
		q := fmt.Sprintf("SELECT count(%s)::VARCHAR, (count(*) - count(%s))::VARCHAR, %s, %s, %s FROM %s", n, n, sum, lo, hi, src)
		var vals [5]any
		if err := db.QueryRowContext(ctx, q).Scan(&vals[0], &vals[1], &vals[2], &vals[3], &vals[4]); err != nil {
			return 0, nil, fmt.Errorf("%s: %w", q, err)
		}
		var strs [5]*string
		for k, v := range vals {
			s, err := answerString(v, c.Type)
			if err != nil {
				return 0, nil, fmt.Errorf("column %s: %w", c.Name, err)
			}
			strs[k] = s
		}
		c.Count, c.NullCount, c.Sum, c.Min, c.Max = *strs[0], *strs[1], strs[2], strs[3], strs[4]
		if float {
			// DuckDB's double sum is plain addition; the data is chosen so
			// that it is exact. Check it against an exact decimal sum.
			var exact string
			if err := db.QueryRowContext(ctx, fmt.Sprintf("SELECT sum(%s::DOUBLE::DECIMAL(38,10))::VARCHAR FROM %s", n, src)).Scan(&exact); err != nil {
				return 0, nil, err
			}
			e, ok := new(big.Rat).SetString(exact)
			s, ok2 := new(big.Rat).SetString(*c.Sum)
			if !ok || !ok2 || e.Cmp(s) != 0 {
				return 0, nil, fmt.Errorf("column %s: DuckDB's sum %s is not the exact sum %s", c.Name, *c.Sum, exact)
			}
		}
		if strings.HasPrefix(c.Type, "TIMESTAMP") {
			for _, p := range []*string{c.Min, c.Max} {
				us, err := strconv.ParseInt(*p, 10, 64)
				if err != nil {
					return 0, nil, fmt.Errorf("column %s: %w", c.Name, err)
				}
				*p = time.UnixMicro(us).UTC().Format(time.RFC3339Nano)
			}
		}
	}
	return nrows, cols, nil
}

// encodings returns the encodings of each column's pages, as DuckDB's
// parquet_metadata reports them.
func encodings(ctx context.Context, db *sql.DB, path string) (map[string]string, error) {
	q := "SELECT path_in_schema, string_agg(DISTINCT encodings, ' ') FROM parquet_metadata(" + quoteString(path) + ") GROUP BY path_in_schema"
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	defer rows.Close()
	encs := map[string]string{}
	for rows.Next() {
		var name, enc string
		if err := rows.Scan(&name, &enc); err != nil {
			return nil, err
		}
		encs[name] = enc
	}
	return encs, rows.Err()
}

// answerString renders a value DuckDB returned: nil as nil, strings as
// they are, floats in their shortest form (a FLOAT column's min and max as
// float32).
func answerString(v any, typ string) (*string, error) {
	var s string
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		s = x
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		s = strconv.FormatFloat(float64(x), 'g', -1, 32)
	default:
		return nil, fmt.Errorf("unexpected DuckDB value %v (%T) of a %s", v, v, typ)
	}
	return &s, nil
}
