package testdatagen

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
)

// Format is how a file is written.
type Format int

// The formats of the generated files.
const (
	Parquet Format = iota
	IPCFile
	IPCStream
)

// File describes one generated file.
type File struct {
	Name   string
	Format Format
	Rows   int
	Chunk  int // rows per row group (Parquet) or record batch (IPC)
	Seed   uint64
	// Omit are columns the file leaves out (Parquet stores no durations, and
	// date64 only as date32).
	Omit []string
}

// Files are the files of testdata/.
var Files = []File{
	{Name: "sample.parquet", Format: Parquet, Rows: 1200, Chunk: 300, Seed: 1, Omit: []string{"day64", "elapsed"}},
	{Name: "sample.arrow", Format: IPCFile, Rows: 600, Chunk: 200, Seed: 2},
	{Name: "sample.arrows", Format: IPCStream, Rows: 500, Chunk: 250, Seed: 3},
}

// TinyFiles are files of 3 rows with the columns of Files, not in testdata/
// (the golden outputs cover that directory): inputs on which a run costs its
// fixed start-up and nearly nothing else (scripts/startup-check.sh).
var TinyFiles = []File{
	{Name: "tiny.parquet", Format: Parquet, Rows: 3, Chunk: 3, Seed: 4, Omit: []string{"day64", "elapsed"}},
	{Name: "tiny.arrow", Format: IPCFile, Rows: 3, Chunk: 3, Seed: 5},
}

// hash is splitmix64's finalizer: a well-mixed 64-bit value per input.
func hash(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// cell is the random word of a column at a row of a file.
func cell(seed uint64, col, row int) uint64 {
	return hash(seed<<40 ^ uint64(col)<<24 ^ uint64(row))
}

// unit maps h to [0, 1).
func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

var words = []string{"apple", "Banana", "cherry", "date", "elderberry", "fig", "grape", "Ünïcödé", "日本語", "kiwi", `"quoted", with comma`}

var colors = []string{"red", "green", "blue", "cyan", "magenta", "yellow"}

// appendAs adapts a value function to the builder whose Append takes T.
func appendAs[T any](f func(h uint64, row int) T) func(array.Builder, uint64, int) {
	return func(b array.Builder, h uint64, row int) { b.(interface{ Append(T) }).Append(f(h, row)) }
}

type colSpec struct {
	field   arrow.Field
	nullMod uint64 // a row is null when the cell's word is 0 modulo nullMod (0: never)
	fill    func(b array.Builder, h uint64, row int)
	// build, when set, makes the column's array for rows [lo, hi) itself.
	build func(mem memory.Allocator, seed uint64, col, lo, hi int) arrow.Array
}

var dictType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

var structType = arrow.StructOf(
	arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
)

func specs() []colSpec {
	f := func(name string, dt arrow.DataType) arrow.Field {
		return arrow.Field{Name: name, Type: dt, Nullable: true}
	}
	return []colSpec{
		{field: f("i8", arrow.PrimitiveTypes.Int8), nullMod: 7, fill: appendAs(func(h uint64, _ int) int8 { return int8(h >> 8) })},
		{field: f("i16", arrow.PrimitiveTypes.Int16), nullMod: 11, fill: appendAs(func(h uint64, _ int) int16 { return int16(h >> 8) })},
		{field: f("i32", arrow.PrimitiveTypes.Int32), nullMod: 13, fill: appendAs(func(h uint64, _ int) int32 { return int32(h >> 8) })},
		// full-range int64: the sum leaves 64 bits
		{field: f("i64", arrow.PrimitiveTypes.Int64), nullMod: 17, fill: appendAs(func(h uint64, _ int) int64 { return int64(hash(h)) })},
		{field: f("u8", arrow.PrimitiveTypes.Uint8), nullMod: 7, fill: appendAs(func(h uint64, _ int) uint8 { return uint8(h >> 8) })},
		{field: f("u16", arrow.PrimitiveTypes.Uint16), fill: appendAs(func(h uint64, _ int) uint16 { return uint16(h >> 8) })},
		{field: f("u32", arrow.PrimitiveTypes.Uint32), nullMod: 5, fill: appendAs(func(h uint64, _ int) uint32 { return uint32(h >> 8) })},
		// the top half of uint64: the sum leaves 64 bits
		{field: f("u64", arrow.PrimitiveTypes.Uint64), nullMod: 19, fill: appendAs(func(h uint64, _ int) uint64 { return hash(h) | 1<<63 })},
		{field: f("f32", arrow.PrimitiveTypes.Float32), nullMod: 9, fill: appendAs(func(h uint64, row int) float32 {
			switch row {
			case 5:
				return float32(math.Inf(-1))
			case 8:
				return float32(math.Copysign(0, -1))
			}
			return float32(unit(hash(h))*2000 - 1000)
		})},
		{field: f("f64", arrow.PrimitiveTypes.Float64), nullMod: 10, fill: appendAs(func(h uint64, _ int) float64 {
			return unit(hash(h))*1e6 - 5e5
		})},
		{field: f("f64_special", arrow.PrimitiveTypes.Float64), fill: appendAs(func(h uint64, row int) float64 {
			switch {
			case row%50 == 3:
				return math.NaN()
			case row%97 == 5:
				return math.Inf(1)
			}
			return unit(hash(h)) * 1e-300
		})},
		{field: f("f64_empty", arrow.PrimitiveTypes.Float64), nullMod: 1, fill: appendAs(func(uint64, int) float64 { return 0 })},
		{field: f("flag", arrow.FixedWidthTypes.Boolean), nullMod: 6, fill: appendAs(func(h uint64, _ int) bool { return hash(h)&3 != 0 })},
		{field: f("day", arrow.FixedWidthTypes.Date32), nullMod: 8, fill: appendAs(func(h uint64, _ int) arrow.Date32 {
			return arrow.Date32(int64(hash(h)%50000) - 20000)
		})},
		{field: f("day64", arrow.FixedWidthTypes.Date64), nullMod: 8, fill: appendAs(func(h uint64, _ int) arrow.Date64 {
			return arrow.Date64((int64(hash(h)%50000) - 20000) * 86400000)
		})},
		{field: f("clock_ms", arrow.FixedWidthTypes.Time32ms), nullMod: 12, fill: appendAs(func(h uint64, _ int) arrow.Time32 {
			return arrow.Time32(hash(h) % 86400000)
		})},
		{field: f("clock_ns", arrow.FixedWidthTypes.Time64ns), nullMod: 12, fill: appendAs(func(h uint64, _ int) arrow.Time64 {
			return arrow.Time64(hash(h) % 86400_000000000)
		})},
		{field: f("ts_paris", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "Europe/Paris"}), nullMod: 14,
			fill: appendAs(func(h uint64, row int) arrow.Timestamp {
				if row == 0 {
					return arrow.Timestamp(951782400_000000) // 2000-02-29T00:00:00Z, no fraction
				}
				return arrow.Timestamp(hash(h) % 4_000_000_000_000000)
			})},
		{field: f("ts_ns", &arrow.TimestampType{Unit: arrow.Nanosecond}), nullMod: 15, fill: appendAs(func(h uint64, _ int) arrow.Timestamp {
			return arrow.Timestamp(int64(hash(h)>>2) - 1<<61)
		})},
		{field: f("elapsed", arrow.FixedWidthTypes.Duration_ms), nullMod: 16, fill: appendAs(func(h uint64, _ int) arrow.Duration {
			return arrow.Duration(int64(hash(h)%2_000_000_000_000) - 1_000_000_000_000)
		})},
		{field: f("price", &arrow.Decimal128Type{Precision: 12, Scale: 2}), nullMod: 9, fill: appendAs(func(h uint64, _ int) decimal128.Num {
			return decimal128.FromI64(int64(hash(h)%1_999_999_999_999) - 999_999_999_999)
		})},
		{field: f("word", arrow.BinaryTypes.String), nullMod: 10, fill: appendAs(func(h uint64, _ int) string {
			return words[hash(h)%uint64(len(words))]
		})},
		{field: f("note", arrow.BinaryTypes.LargeString), nullMod: 4, fill: appendAs(func(h uint64, row int) string {
			if row%100 == 1 {
				return ""
			}
			return fmt.Sprintf("note %d", hash(h)%1000)
		})},
		{field: f("blob", arrow.BinaryTypes.Binary), nullMod: 9, fill: appendAs(func(h uint64, _ int) []byte {
			b := make([]byte, h%9)
			for i := range b {
				b[i] = byte(hash(h + uint64(i)))
			}
			return b
		})},
		{field: f("color", dictType), nullMod: 7, build: buildDict},
		{field: f("point", structType), build: buildStruct},
		{field: f("tags", arrow.ListOf(arrow.PrimitiveTypes.Int32)), build: buildList},
	}
}

// Schema is the schema of file f: every column but those f omits.
func Schema(f File) *arrow.Schema {
	var fields []arrow.Field
	for _, s := range specs() {
		if !slices.Contains(f.Omit, s.field.Name) {
			fields = append(fields, s.field)
		}
	}
	return arrow.NewSchema(fields, nil)
}

// Record builds rows [lo, hi) of f.
func Record(mem memory.Allocator, f File, lo, hi int) arrow.Record {
	var cols []arrow.Array
	for c, s := range specs() {
		if slices.Contains(f.Omit, s.field.Name) {
			continue
		}
		if s.build != nil {
			cols = append(cols, s.build(mem, f.Seed, c, lo, hi))
			continue
		}
		b := array.NewBuilder(mem, s.field.Type)
		for row := lo; row < hi; row++ {
			h := cell(f.Seed, c, row)
			if s.nullMod != 0 && h%s.nullMod == 0 {
				b.AppendNull()
			} else {
				s.fill(b, h, row)
			}
		}
		cols = append(cols, b.NewArray())
		b.Release()
	}
	rec := array.NewRecord(Schema(f), cols, int64(hi-lo))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// buildDict makes indices into one fixed dictionary (the same in every
// batch, as the IPC file format requires).
func buildDict(mem memory.Allocator, seed uint64, col, lo, hi int) arrow.Array {
	db := array.NewStringBuilder(mem)
	defer db.Release()
	for _, c := range colors {
		db.Append(c)
	}
	dict := db.NewArray()
	defer dict.Release()
	ib := array.NewInt32Builder(mem)
	defer ib.Release()
	for row := lo; row < hi; row++ {
		h := cell(seed, col, row)
		if h%7 == 0 {
			ib.AppendNull()
		} else {
			ib.Append(int32(hash(h) % uint64(dict.Len())))
		}
	}
	idx := ib.NewArray()
	defer idx.Release()
	return array.NewDictionaryArray(dictType, idx, dict)
}

// buildStruct makes a struct column with nulls at both levels.
func buildStruct(mem memory.Allocator, seed uint64, col, lo, hi int) arrow.Array {
	b := array.NewStructBuilder(mem, structType)
	defer b.Release()
	a := b.FieldBuilder(0).(*array.Int32Builder)
	s := b.FieldBuilder(1).(*array.StringBuilder)
	for row := lo; row < hi; row++ {
		h := cell(seed, col, row)
		if h%10 == 0 {
			b.AppendNull()
			continue
		}
		b.Append(true)
		if h%6 == 1 {
			a.AppendNull()
		} else {
			a.Append(int32(hash(h)%2001) - 1000)
		}
		if h%5 == 2 {
			s.AppendNull()
		} else {
			s.Append(words[hash(h+1)%uint64(len(words))])
		}
	}
	return b.NewArray()
}

// buildList makes a list column, a type the engine does not aggregate.
func buildList(mem memory.Allocator, seed uint64, col, lo, hi int) arrow.Array {
	b := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int32)
	defer b.Release()
	vb := b.ValueBuilder().(*array.Int32Builder)
	for row := lo; row < hi; row++ {
		h := cell(seed, col, row)
		if h%8 == 0 {
			b.AppendNull()
			continue
		}
		b.Append(true)
		for i := uint64(0); i < h%4; i++ {
			vb.Append(int32(hash(h + i)))
		}
	}
	return b.NewArray()
}

// Write writes every file of Files into dir.
func Write(dir string) error { return WriteFiles(dir, Files) }

// WriteFiles writes files into dir.
func WriteFiles(dir string, files []File) error {
	for _, f := range files {
		if err := writeFile(filepath.Join(dir, f.Name), f); err != nil {
			return fmt.Errorf("writing %s: %w", f.Name, err)
		}
	}
	return nil
}

func writeFile(path string, f File) (err error) {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		// the Parquet writer closes the file itself
		if cerr := out.Close(); err == nil && !errors.Is(cerr, os.ErrClosed) {
			err = cerr
		}
	}()
	mem := memory.DefaultAllocator
	type writer interface {
		Write(arrow.Record) error
		Close() error
	}
	var w writer
	switch f.Format {
	case Parquet:
		props := parquet.NewWriterProperties(
			parquet.WithAllocator(mem),
			parquet.WithCompression(compress.Codecs.Snappy),
			parquet.WithDictionaryDefault(true),
			parquet.WithMaxRowGroupLength(int64(f.Chunk)),
			parquet.WithDataPageSize(4<<10), // several pages per column chunk
			parquet.WithCreatedBy("arrowagg testdatagen"),
		)
		w, err = pqarrow.NewFileWriter(Schema(f), out, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	case IPCFile:
		w, err = ipc.NewFileWriter(out, ipc.WithSchema(Schema(f)), ipc.WithAllocator(mem))
	case IPCStream:
		w = ipc.NewWriter(out, ipc.WithSchema(Schema(f)), ipc.WithAllocator(mem))
	default:
		return fmt.Errorf("unknown format %d", f.Format)
	}
	if err != nil {
		return err
	}
	for lo := 0; lo < f.Rows; lo += f.Chunk {
		rec := Record(mem, f, lo, min(lo+f.Chunk, f.Rows))
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}
