// Command benchgen writes a deterministic Parquet file of numeric columns for
// the benchmarks: snappy-compressed, several row groups, about 5-10% nulls in
// most columns, one dictionary-encoded column.
//
// The data of row group g and column c depends only on (seed, g, c), so a file
// is the same whatever the number of generator goroutines. Row groups are
// generated ahead by a few goroutines and written one by one, so memory stays
// bounded by a handful of row groups whatever the file size.
//
// Usage:
//
//	benchgen -o bench/data/bench-1g.parquet -size 1GiB
//	benchgen -o bench/data/bench-4g.parquet -size 4GiB
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/arrowagg/arrowagg/bench/internal/gen"
)

// value is the set of Arrow primitive types the generator writes.
type value interface {
	~int32 | ~int64 | ~uint32 | ~float32 | ~float64
}

// columnGen describes one generated column.
type columnGen interface {
	field() arrow.Field
	// dictionary reports whether the column is written dictionary-encoded.
	dictionary() bool
	// generate returns the column's values for n rows drawn from rng.
	generate(rng *rand.Rand, n int, mem memory.Allocator) arrow.Array
}

// numericColumn is a column of T values with a fraction of nulls.
type numericColumn[T value] struct {
	name     string
	typ      arrow.DataType
	nullFrac float64
	dict     bool
	draw     func(*rand.Rand) T
}

func (c numericColumn[T]) field() arrow.Field {
	return arrow.Field{Name: c.name, Type: c.typ, Nullable: true}
}

func (c numericColumn[T]) dictionary() bool { return c.dict }

func (c numericColumn[T]) generate(rng *rand.Rand, n int, mem memory.Allocator) arrow.Array {
	width := c.typ.(arrow.FixedWidthDataType).Bytes()
	values := memory.NewResizableBuffer(mem)
	values.Resize(n * width)
	vals := arrow.GetData[T](values.Bytes())[:n]

	var validity *memory.Buffer
	nulls := 0
	if c.nullFrac > 0 {
		validity = memory.NewResizableBuffer(mem)
		validity.Resize(int(bitutil.BytesForBits(int64(n))))
		bits := validity.Bytes()
		clear(bits)
		for i := range vals {
			if rng.Float64() < c.nullFrac {
				nulls++
				continue
			}
			bitutil.SetBit(bits, i)
			vals[i] = c.draw(rng)
		}
	} else {
		for i := range vals {
			vals[i] = c.draw(rng)
		}
	}
	data := array.NewData(c.typ, n, []*memory.Buffer{validity, values}, nil, nulls, 0)
	defer data.Release()
	values.Release()
	if validity != nil {
		validity.Release()
	}
	return array.MakeFromData(data)
}

// columns is the schema of the benchmark file. Value ranges keep float sums
// well conditioned (so two engines agree to a tight relative tolerance) while
// the int64 column's sum exceeds 64 bits on files of a few million rows.
var columns = []columnGen{
	numericColumn[int32]{name: "qty", typ: arrow.PrimitiveTypes.Int32, nullFrac: 0.05,
		draw: func(r *rand.Rand) int32 { return r.Int32N(101_000) - 1_000 }},
	numericColumn[int32]{name: "store", typ: arrow.PrimitiveTypes.Int32, nullFrac: 0.07, dict: true,
		draw: func(r *rand.Rand) int32 { return r.Int32N(1_000) }},
	numericColumn[int64]{name: "amount", typ: arrow.PrimitiveTypes.Int64, nullFrac: 0.10,
		draw: func(r *rand.Rand) int64 { return r.Int64N(4_000_000_000_000_001) - 1_000_000_000_000_000 }},
	numericColumn[int64]{name: "ts_ms", typ: arrow.PrimitiveTypes.Int64, nullFrac: 0,
		draw: func(r *rand.Rand) int64 { return 1_700_000_000_000 + r.Int64N(31_536_000_000) }},
	numericColumn[float64]{name: "price", typ: arrow.PrimitiveTypes.Float64, nullFrac: 0.08,
		draw: func(r *rand.Rand) float64 { return float64(r.IntN(100_000)) / 100 }},
	numericColumn[float64]{name: "temp", typ: arrow.PrimitiveTypes.Float64, nullFrac: 0,
		draw: func(r *rand.Rand) float64 { return 20 + 10*r.NormFloat64() }},
	numericColumn[float32]{name: "ratio", typ: arrow.PrimitiveTypes.Float32, nullFrac: 0.06,
		draw: func(r *rand.Rand) float32 { return r.Float32() }},
	numericColumn[uint32]{name: "code", typ: arrow.PrimitiveTypes.Uint32, nullFrac: 0.05,
		draw: func(r *rand.Rand) uint32 { return r.Uint32() }},
}

func schema() *arrow.Schema {
	fields := make([]arrow.Field, len(columns))
	for i, c := range columns {
		fields[i] = c.field()
	}
	return arrow.NewSchema(fields, nil)
}

// rowGroupRNG returns the random source of column col in row group rg.
func rowGroupRNG(seed uint64, rg, col int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(rg)<<16|uint64(col)))
}

// generateRowGroup builds the record of row group rg.
func generateRowGroup(seed uint64, rg, rows int, sc *arrow.Schema, mem memory.Allocator) arrow.Record {
	cols := make([]arrow.Array, len(columns))
	for i, c := range columns {
		cols[i] = c.generate(rowGroupRNG(seed, rg, i), rows, mem)
	}
	rec := array.NewRecord(sc, cols, int64(rows))
	for _, a := range cols {
		a.Release()
	}
	return rec
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

type config struct {
	out          string
	size         int64
	rowsPerGroup int
	seed         uint64
	workers      int
}

// generate writes the file: row groups until the file reaches cfg.size bytes.
// It writes to a temporary name and renames it on success, so an interrupted
// run never leaves a file that looks complete.
func generate(ctx context.Context, cfg config, log io.Writer) (rows int64, groups int, err error) {
	if err := os.MkdirAll(filepath.Dir(cfg.out), 0o755); err != nil {
		return 0, 0, fmt.Errorf("create output directory: %w", err)
	}
	tmp := cfg.out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return 0, 0, fmt.Errorf("create %s: %w", tmp, err)
	}
	defer func() {
		if err != nil {
			f.Close() // may already be closed
			os.Remove(tmp)
		}
	}()
	cw := &countingWriter{w: f}

	props := []parquet.WriterProperty{
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithDictionaryDefault(false),
		parquet.WithMaxRowGroupLength(int64(cfg.rowsPerGroup)),
		parquet.WithCreatedBy("arrowagg benchgen"),
	}
	for _, c := range columns {
		if c.dictionary() {
			props = append(props, parquet.WithDictionaryFor(c.field().Name, true))
		}
	}
	sc := schema()
	fw, err := pqarrow.NewFileWriter(sc, cw, parquet.NewWriterProperties(props...), pqarrow.DefaultWriterProps())
	if err != nil {
		return 0, 0, fmt.Errorf("open parquet writer: %w", err)
	}

	// Workers generate row groups ahead of the writer, which takes them in
	// order until the file is large enough.
	start := time.Now()
	makeGroup := func(rg int) arrow.Record {
		return generateRowGroup(cfg.seed, rg, cfg.rowsPerGroup, sc, memory.DefaultAllocator)
	}
	err = gen.Ordered(ctx, cfg.workers, -1, makeGroup, func(rg int, rec arrow.Record) (bool, error) {
		werr := fw.Write(rec)
		rec.Release()
		if werr != nil {
			return false, fmt.Errorf("write row group %d: %w", rg, werr)
		}
		rows += int64(cfg.rowsPerGroup)
		groups++
		if groups%8 == 0 {
			fmt.Fprintf(log, "benchgen: %d row groups, %d rows, %.0f MiB, %.1fs\n",
				groups, rows, float64(cw.n)/(1<<20), time.Since(start).Seconds())
		}
		return cw.n >= cfg.size, nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return 0, 0, fmt.Errorf("interrupted: %w", err)
		}
		return 0, 0, err
	}
	if err := fw.Close(); err != nil {
		return 0, 0, fmt.Errorf("close parquet writer: %w", err)
	}
	if err := f.Close(); err != nil {
		return 0, 0, fmt.Errorf("close %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, cfg.out); err != nil {
		return 0, 0, fmt.Errorf("rename %s: %w", tmp, err)
	}
	return rows, groups, nil
}

func main() {
	var cfg config
	var size string
	flag.StringVar(&cfg.out, "o", "bench/data/bench-1g.parquet", "output Parquet file")
	flag.StringVar(&size, "size", "1GiB", "write row groups until the file is at least this large")
	flag.IntVar(&cfg.rowsPerGroup, "rows-per-group", 1<<20, "rows per row group")
	flag.Uint64Var(&cfg.seed, "seed", 1, "random seed; the same seed and flags give the same file")
	flag.IntVar(&cfg.workers, "workers", runtime.GOMAXPROCS(0), "generator goroutines")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "benchgen: unexpected arguments:", flag.Args())
		os.Exit(2)
	}
	var err error
	if cfg.size, err = gen.ParseSize(size); err != nil {
		fmt.Fprintln(os.Stderr, "benchgen:", err)
		os.Exit(2)
	}
	if cfg.rowsPerGroup < 1 || cfg.workers < 1 {
		fmt.Fprintln(os.Stderr, "benchgen: -rows-per-group and -workers must be positive")
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	rows, groups, err := generate(ctx, cfg, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchgen:", err)
		if errors.Is(err, context.Canceled) {
			os.Exit(130)
		}
		os.Exit(1)
	}
	st, err := os.Stat(cfg.out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchgen:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "benchgen: wrote %s: %d rows, %d row groups, %d columns, %.2f GiB in %.1fs\n",
		cfg.out, rows, groups, len(columns), float64(st.Size())/(1<<30), time.Since(start).Seconds())
}
