// Command ipcgen writes a deterministic Arrow IPC file (the file format) of
// about a given size, and optionally its two halves as files of their own:
// the first half of its record batches, and the rest. Aggregating the whole
// file and aggregating the two halves as one dataset must give the same
// answer, which is how scripts/gpu-check.sh checks that larger-than-memory
// inputs stream through arrowagg.
//
// The columns are i32 (int32), i64 (full-range int64, about 10% null: its
// sum needs more than 64 bits), f64 (float64 in [-100, 900), about 5% null)
// and s (strings of 4 to 12 letters, about 4% null). Every value is a
// function of the seed, the column and the row number alone, so the files
// are the same bytes whatever the number of generator goroutines. Batches
// are generated ahead by a few goroutines and written in order, so memory
// stays bounded by a few batches per goroutine whatever the file size.
//
// Usage:
//
//	ipcgen -o whole.arrow -size 20GiB [-first a.arrow -second b.arrow] [-seed 1]
//
// It prints one JSON line on standard output: the rows and bytes of each
// file written.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/bench/internal/gen"
)

// schema is the schema of the generated files.
var schema = arrow.NewSchema([]arrow.Field{
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// hash is splitmix64's finalizer: a bijection with well-mixed output.
func hash(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// columnKeys are the per-column keys of a seed; the word of a cell is
// hash(key ^ row).
func columnKeys(seed uint64) [4]uint64 {
	var k [4]uint64
	for c := range k {
		k[c] = hash(hash(seed) + uint64(c))
	}
	return k
}

// fixed fills n values of a fixed-width column from the cell words of rows
// [row0, row0+n): value(h) gives the value, null(h) whether it is null.
func fixed[T int32 | int64 | float64](dt arrow.DataType, key uint64, row0 int64, n int, value func(h uint64) T, null func(h uint64) bool) arrow.Array {
	width := dt.(arrow.FixedWidthDataType).Bytes()
	values := memory.NewResizableBuffer(memory.DefaultAllocator)
	values.Resize(n * width)
	vals := arrow.GetData[T](values.Bytes())[:n]
	var validity *memory.Buffer
	var bits []byte
	if null != nil {
		validity = memory.NewResizableBuffer(memory.DefaultAllocator)
		validity.Resize(int(bitutil.BytesForBits(int64(n))))
		bits = validity.Bytes()
		clear(bits)
	}
	nulls := 0
	for i := range vals {
		h := hash(key ^ uint64(row0+int64(i)))
		if null != nil {
			if null(h) {
				nulls++
				vals[i] = 0
				continue
			}
			bitutil.SetBit(bits, i)
		}
		vals[i] = value(h)
	}
	data := array.NewData(dt, n, []*memory.Buffer{validity, values}, nil, nulls, 0)
	defer data.Release()
	values.Release()
	if validity != nil {
		validity.Release()
	}
	return array.MakeFromData(data)
}

// stringColumn fills n strings of 4 to 12 lower-case letters, about 4% null.
func stringColumn(key uint64, row0 int64, n int) arrow.Array {
	offsets := memory.NewResizableBuffer(memory.DefaultAllocator)
	offsets.Resize((n + 1) * 4)
	offs := arrow.Int32Traits.CastFromBytes(offsets.Bytes())
	validity := memory.NewResizableBuffer(memory.DefaultAllocator)
	validity.Resize(int(bitutil.BytesForBits(int64(n))))
	bits := validity.Bytes()
	clear(bits)
	chars := make([]byte, 0, n*9)
	nulls := 0
	offs[0] = 0
	for i := 0; i < n; i++ {
		h := hash(key ^ uint64(row0+int64(i)))
		if h%25 == 0 {
			nulls++
		} else {
			bitutil.SetBit(bits, i)
			l := 4 + int(h>>8)%9
			w := hash(h)
			for j := 0; j < l; j++ {
				chars = append(chars, 'a'+byte((w>>(5*j))%26))
			}
		}
		offs[i+1] = int32(len(chars))
	}
	values := memory.NewBufferBytes(chars)
	data := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{validity, offsets, values}, nil, nulls, 0)
	defer data.Release()
	offsets.Release()
	validity.Release()
	return array.MakeFromData(data)
}

// batch returns the record batch of rows [row0, row0+n).
func batch(keys [4]uint64, row0 int64, n int) arrow.Record {
	cols := []arrow.Array{
		fixed(arrow.PrimitiveTypes.Int32, keys[0], row0, n, func(h uint64) int32 { return int32(h >> 32) }, nil),
		fixed(arrow.PrimitiveTypes.Int64, keys[1], row0, n, func(h uint64) int64 { return int64(hash(h)) },
			func(h uint64) bool { return h%10 == 0 }),
		fixed(arrow.PrimitiveTypes.Float64, keys[2], row0, n, func(h uint64) float64 {
			return float64(hash(h)>>11)/(1<<53)*1000 - 100
		}, func(h uint64) bool { return h%20 == 0 }),
		stringColumn(keys[3], row0, n),
	}
	rec := array.NewRecord(schema, cols, int64(n))
	for _, c := range cols {
		c.Release()
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

// Seek reports the position (the bytes written): the IPC file writer asks
// for it, through a buffer, and never moves.
func (c *countingWriter) Seek(offset int64, whence int) (int64, error) {
	if offset != 0 || whence != io.SeekCurrent {
		return 0, errors.New("countingWriter only reports its position")
	}
	return c.n, nil
}

// batchBytes is the size of the IPC message of one batch of rows rows.
func batchBytes(keys [4]uint64, rows int) (int64, error) {
	rec := batch(keys, 0, rows)
	defer rec.Release()
	cw := &countingWriter{w: io.Discard}
	w := ipc.NewWriter(cw, ipc.WithSchema(schema))
	if err := w.Write(rec); err != nil {
		return 0, err
	}
	before := cw.n
	if err := w.Write(rec); err != nil {
		return 0, err
	}
	return cw.n - before, w.Close()
}

// output is one file being written: to a temporary name, renamed when
// complete, so that an interrupted run never leaves a file that looks whole.
type output struct {
	path string
	f    *os.File
	buf  *bufio.Writer
	cw   *countingWriter
	w    *ipc.FileWriter
	rows int64
}

func create(path string) (*output, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("creating the directory of %s: %w", path, err)
	}
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return nil, err
	}
	o := &output{path: path, f: f, buf: bufio.NewWriterSize(f, 4<<20)}
	o.cw = &countingWriter{w: o.buf}
	if o.w, err = ipc.NewFileWriter(o.cw, ipc.WithSchema(schema)); err != nil {
		o.abort()
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	return o, nil
}

func (o *output) write(rec arrow.Record) error {
	if err := o.w.Write(rec); err != nil {
		return fmt.Errorf("writing %s: %w", o.path, err)
	}
	o.rows += rec.NumRows()
	return nil
}

// finish writes the footer, closes the file and gives it its name.
func (o *output) finish() error {
	if err := o.w.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", o.path, err)
	}
	if err := o.buf.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", o.path, err)
	}
	if err := o.f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", o.path, err)
	}
	if err := os.Rename(o.path+".tmp", o.path); err != nil {
		return fmt.Errorf("renaming %s: %w", o.path, err)
	}
	return nil
}

// abort removes the temporary file.
func (o *output) abort() {
	o.f.Close()
	os.Remove(o.path + ".tmp")
}

type config struct {
	out, first, second string
	size               int64
	rowsPerBatch       int
	seed               uint64
	workers            int
}

// fileStats is what the JSON line says of one file.
type fileStats struct {
	Path  string `json:"path"`
	Rows  int64  `json:"rows"`
	Bytes int64  `json:"bytes"`
}

// generate writes the whole file and, when asked, its halves.
func generate(ctx context.Context, cfg config, log io.Writer) (_ []fileStats, err error) {
	keys := columnKeys(cfg.seed)
	per, err := batchBytes(keys, cfg.rowsPerBatch)
	if err != nil {
		return nil, fmt.Errorf("sizing a batch: %w", err)
	}
	batches := max(2, int((cfg.size+per/2)/per))
	half := batches / 2

	var outs []*output
	defer func() {
		if err != nil {
			for _, o := range outs {
				o.abort()
			}
		}
	}()
	for _, p := range []string{cfg.out, cfg.first, cfg.second} {
		if p == "" {
			continue
		}
		o, err := create(p)
		if err != nil {
			return nil, err
		}
		outs = append(outs, o)
	}
	whole := outs[0]
	var first, second *output
	if cfg.first != "" {
		first, second = outs[1], outs[2]
	}

	// Workers generate batches ahead of the writer, which takes them in
	// order.
	start, last := time.Now(), time.Now()
	makeBatch := func(b int) arrow.Record { return batch(keys, int64(b)*int64(cfg.rowsPerBatch), cfg.rowsPerBatch) }
	err = gen.Ordered(ctx, cfg.workers, batches, makeBatch, func(b int, rec arrow.Record) (bool, error) {
		defer rec.Release()
		// The batch goes to the whole file and to its half at once.
		var halfErr error
		var written sync.WaitGroup
		if first != nil {
			o := second
			if b < half {
				o = first
			}
			written.Add(1)
			go func() {
				defer written.Done()
				halfErr = o.write(rec)
			}()
		}
		err := whole.write(rec)
		written.Wait()
		if err = errors.Join(err, halfErr); err != nil {
			return false, err
		}
		if time.Since(last) >= 5*time.Second {
			last = time.Now()
			fmt.Fprintf(log, "ipcgen: %d of %d batches, %.2f GiB, %.1fs\n", b+1, batches, float64(whole.cw.n)/(1<<30), time.Since(start).Seconds())
		}
		return false, nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("interrupted: %w", err)
		}
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("interrupted: %w", err)
	}
	var stats []fileStats
	for _, o := range outs {
		if err := o.finish(); err != nil {
			return nil, err
		}
		stats = append(stats, fileStats{Path: o.path, Rows: o.rows, Bytes: o.cw.n})
	}
	return stats, nil
}

func main() {
	var cfg config
	var size string
	flag.StringVar(&cfg.out, "o", "", "the Arrow IPC file to write (required)")
	flag.StringVar(&cfg.first, "first", "", "also write the first half of its batches to this file (with -second)")
	flag.StringVar(&cfg.second, "second", "", "and the other half to this one")
	flag.StringVar(&size, "size", "1GiB", "about how large the file is")
	flag.IntVar(&cfg.rowsPerBatch, "rows-per-batch", 1<<20, "rows per record batch")
	flag.Uint64Var(&cfg.seed, "seed", 1, "random seed; the same seed and flags give the same files")
	flag.IntVar(&cfg.workers, "workers", runtime.GOMAXPROCS(0), "generator goroutines")
	flag.Parse()
	usage := func(msg string) {
		fmt.Fprintln(os.Stderr, "ipcgen:", msg)
		os.Exit(2)
	}
	if flag.NArg() != 0 {
		usage(fmt.Sprint("unexpected arguments: ", flag.Args()))
	}
	if cfg.out == "" {
		usage("-o is required")
	}
	if (cfg.first == "") != (cfg.second == "") {
		usage("-first and -second go together")
	}
	var err error
	if cfg.size, err = gen.ParseSize(size); err != nil {
		usage(err.Error())
	}
	if cfg.rowsPerBatch < 1 || cfg.workers < 1 {
		usage("-rows-per-batch and -workers must be positive")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	stats, err := generate(ctx, cfg, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ipcgen:", err)
		if errors.Is(err, context.Canceled) {
			os.Exit(130)
		}
		os.Exit(1)
	}
	for _, s := range stats {
		fmt.Fprintf(os.Stderr, "ipcgen: wrote %s: %d rows, %.2f GiB\n", s.Path, s.Rows, float64(s.Bytes)/(1<<30))
	}
	fmt.Fprintf(os.Stderr, "ipcgen: %.1fs\n", time.Since(start).Seconds())
	line, err := json.Marshal(map[string]any{"files": stats, "seconds": time.Since(start).Seconds()})
	if err == nil {
		_, err = fmt.Printf("%s\n", line)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ipcgen:", err)
		os.Exit(1)
	}
}
