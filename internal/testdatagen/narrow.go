package testdatagen

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/float16"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/schema"
	flatbuffers "github.com/google/flatbuffers/go"
)

// The narrow files hold the types newer writers produce that arrow-go v17
// writes or reads only in part: float16, fixed_size_binary (and Parquet's
// UUID), and decimal32 and decimal64 (Arrow 18 and later), which arrow-go
// v17 can neither write nor read. An IPC stream of decimal32 and decimal64
// columns is written here as Arrow C++ writes it: a schema message built
// with the flatbuffers builder, Decimal fields of bitWidth 32 and 64, then
// the record batches of the same columns written by arrow-go as the
// fixed_size_binary(4) and (8) arrays they are laid out as. A Parquet file
// of INT32 and INT64 decimals carries, as Arrow C++ 18 writes it, the Arrow
// schema (ARROW:schema) that says decimal32 and decimal64.

// NarrowRows are the rows of every narrow file.
const NarrowRows = 8

// NarrowHalves are the bits of the float16 column "half" (0xFFFF marks a
// null): 1.5, null, -2, NaN, -0, +0, 65504 (the largest half), 2^-24 (the
// smallest subnormal).
var NarrowHalves = []uint16{0x3E00, 0xFFFF, 0xC000, 0x7E00, 0x8000, 0x0000, 0x7BFF, 0x0001}

// NarrowCodes are the 3-byte values of the fixed_size_binary(3) column
// "code" ("" marks a null).
var NarrowCodes = []string{"abc", "", "ab\x00", "\xff\x00\x01", "abd", "", "ABC", "a\\b"}

// NarrowUUIDs are the 16-byte values of the UUID column "uuid" (Parquet
// only; "" marks a null).
var NarrowUUIDs = []string{"\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\xdd\xee\xff", "",
	"\xff\xee\xdd\xcc\xbb\xaa\x99\x88\x77\x66\x55\x44\x33\x22\x11\x00", "", "", "",
	"\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10", "0123456789abcdef"}

// NarrowDec32 and NarrowDec64 are the unscaled values of the decimal32(7, 2)
// column "d32" and the decimal64(15, 3) column "d64"; NarrowDecNull marks
// their nulls.
var (
	NarrowDec32   = []int64{12345, -99999, NarrowDecNull, 9999999, -9999999, 0, 1, NarrowDecNull}
	NarrowDec64   = []int64{NarrowDecNull, 999999999999999, -999999999999999, 123456789, -1, 0, NarrowDecNull, 42}
	NarrowDecNull = int64(-1 << 63)
)

// WriteNarrow writes narrow.arrow (float16 and fixed_size_binary), narrow.arrows
// (decimal32 and decimal64) and narrow.parquet (all of them, and UUID) into
// dir.
func WriteNarrow(dir string) error {
	if err := writeNarrowIPC(filepath.Join(dir, "narrow.arrow")); err != nil {
		return fmt.Errorf("narrow.arrow: %w", err)
	}
	if err := writeNarrowDecimalStream(filepath.Join(dir, "narrow.arrows")); err != nil {
		return fmt.Errorf("narrow.arrows: %w", err)
	}
	if err := writeNarrowParquet(filepath.Join(dir, "narrow.parquet")); err != nil {
		return fmt.Errorf("narrow.parquet: %w", err)
	}
	return nil
}

// fsbArray is a fixed_size_binary array of vals ("" a null, or a null
// where null says).
func fsbArray(width int, n int, val func(i int) ([]byte, bool)) arrow.Array {
	b := array.NewFixedSizeBinaryBuilder(memory.DefaultAllocator, &arrow.FixedSizeBinaryType{ByteWidth: width})
	defer b.Release()
	for i := 0; i < n; i++ {
		if v, ok := val(i); ok {
			b.Append(v)
		} else {
			b.AppendNull()
		}
	}
	return b.NewArray()
}

func writeNarrowIPC(path string) error {
	hb := array.NewFloat16Builder(memory.DefaultAllocator)
	defer hb.Release()
	for _, h := range NarrowHalves {
		if h == 0xFFFF {
			hb.AppendNull()
			continue
		}
		hb.Append(float16.FromBits(h))
	}
	half := hb.NewArray()
	defer half.Release()
	code := fsbArray(3, NarrowRows, func(i int) ([]byte, bool) { return []byte(NarrowCodes[i]), NarrowCodes[i] != "" })
	defer code.Release()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "half", Type: half.DataType(), Nullable: true},
		{Name: "code", Type: code.DataType(), Nullable: true},
	}, nil)
	rec := array.NewRecord(sc, []arrow.Array{half, code}, NarrowRows)
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(sc))
	if err == nil {
		err = w.Write(rec)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// decimalBytes are the little-endian two's complement bytes of v in width
// bytes.
func decimalBytes(v int64, width int) []byte {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(v))
	return b[:width]
}

// narrowDecimalArrays are d32 and d64 as fixed_size_binary(4) and (8).
func narrowDecimalArrays() (d32, d64 arrow.Array) {
	col := func(vals []int64, width int) arrow.Array {
		return fsbArray(width, NarrowRows, func(i int) ([]byte, bool) {
			return decimalBytes(vals[i], width), vals[i] != NarrowDecNull
		})
	}
	return col(NarrowDec32, 4), col(NarrowDec64, 8)
}

// narrowField is a field of a schema message built by hand.
type narrowField struct {
	name string
	typ  func(*flatbuffers.Builder) (tag byte, table flatbuffers.UOffsetT)
}

// The Type union members used here (Schema.fbs).
const (
	fbFloatingPoint   = 3
	fbDecimal         = 7
	fbFixedSizeBinary = 15
)

func decimalType(bitWidth, precision, scale int32) func(*flatbuffers.Builder) (byte, flatbuffers.UOffsetT) {
	return func(b *flatbuffers.Builder) (byte, flatbuffers.UOffsetT) {
		b.StartObject(3)
		b.PrependInt32Slot(0, precision, 0)
		b.PrependInt32Slot(1, scale, 0)
		b.PrependInt32Slot(2, bitWidth, 128)
		return fbDecimal, b.EndObject()
	}
}

func fixedSizeBinaryType(width int32) func(*flatbuffers.Builder) (byte, flatbuffers.UOffsetT) {
	return func(b *flatbuffers.Builder) (byte, flatbuffers.UOffsetT) {
		b.StartObject(1)
		b.PrependInt32Slot(0, width, 0)
		return fbFixedSizeBinary, b.EndObject()
	}
}

func halfType(b *flatbuffers.Builder) (byte, flatbuffers.UOffsetT) {
	b.StartObject(1)
	b.PrependInt16Slot(0, 0, 0) // HALF
	return fbFloatingPoint, b.EndObject()
}

// schemaMessage is the encapsulated schema message (continuation marker,
// length, metadata padded to 8 bytes) of nullable fields.
func schemaMessage(fields []narrowField) []byte {
	b := flatbuffers.NewBuilder(512)
	offs := make([]flatbuffers.UOffsetT, len(fields))
	for i, f := range fields {
		name := b.CreateString(f.name)
		tag, typ := f.typ(b)
		b.StartVector(4, 0, 4)
		children := b.EndVector(0)
		b.StartObject(7) // Field
		b.PrependUOffsetTSlot(0, name, 0)
		b.PrependBoolSlot(1, true, false)
		b.PrependByteSlot(2, tag, 0)
		b.PrependUOffsetTSlot(3, typ, 0)
		b.PrependUOffsetTSlot(5, children, 0)
		offs[i] = b.EndObject()
	}
	b.StartVector(4, len(offs), 4)
	for i := len(offs) - 1; i >= 0; i-- {
		b.PrependUOffsetT(offs[i])
	}
	vec := b.EndVector(len(offs))
	b.StartObject(4) // Schema
	b.PrependUOffsetTSlot(1, vec, 0)
	sc := b.EndObject()
	b.StartObject(5)            // Message
	b.PrependInt16Slot(0, 4, 0) // V5
	b.PrependByteSlot(1, 1, 0)  // Schema
	b.PrependUOffsetTSlot(2, sc, 0)
	b.Finish(b.EndObject())
	meta := b.FinishedBytes()
	padded := (len(meta) + 7) &^ 7
	out := binary.LittleEndian.AppendUint32(nil, 0xFFFFFFFF)
	out = binary.LittleEndian.AppendUint32(out, uint32(padded))
	out = append(out, meta...)
	return append(out, make([]byte, padded-len(meta))...)
}

// decimalStream is an IPC stream of the columns d32 (decimal32(7, 2)) and
// d64 (decimal64(15, 3)).
func decimalStream() ([]byte, error) {
	d32, d64 := narrowDecimalArrays()
	defer d32.Release()
	defer d64.Release()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "d32", Type: d32.DataType(), Nullable: true},
		{Name: "d64", Type: d64.DataType(), Nullable: true},
	}, nil)
	rec := array.NewRecord(sc, []arrow.Array{d32, d64}, NarrowRows)
	defer rec.Release()
	var body bytes.Buffer
	w := ipc.NewWriter(&body, ipc.WithSchema(sc))
	if err := w.Write(rec); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	// Skip arrow-go's schema message: the continuation marker, the length
	// of the metadata, the metadata.
	b := body.Bytes()
	skip := 8 + int(binary.LittleEndian.Uint32(b[4:8]))
	out := schemaMessage([]narrowField{{"d32", decimalType(32, 7, 2)}, {"d64", decimalType(64, 15, 3)}})
	return append(out, b[skip:]...), nil
}

func writeNarrowDecimalStream(path string) error {
	b, err := decimalStream()
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// writeNarrowParquet writes the narrow columns as Arrow C++ 18 does, with
// the Parquet writer of arrow-go (pqarrow writes no decimal32): half
// FIXED_LEN_BYTE_ARRAY(2) FLOAT16, code FIXED_LEN_BYTE_ARRAY(3), uuid
// FIXED_LEN_BYTE_ARRAY(16) UUID, d32 INT32 DECIMAL(7, 2), d64 INT64
// DECIMAL(15, 3), and ARROW:schema saying float16, fixed_size_binary and
// decimal32 and decimal64.
func writeNarrowParquet(path string) error {
	opt := parquet.Repetitions.Optional
	nodes := []schema.Node{
		schema.MustPrimitive(schema.NewPrimitiveNodeLogical("half", opt, schema.Float16LogicalType{}, parquet.Types.FixedLenByteArray, 2, -1)),
		schema.MustPrimitive(schema.NewPrimitiveNode("code", opt, parquet.Types.FixedLenByteArray, -1, 3)),
		schema.MustPrimitive(schema.NewPrimitiveNodeLogical("uuid", opt, schema.UUIDLogicalType{}, parquet.Types.FixedLenByteArray, 16, -1)),
		schema.MustPrimitive(schema.NewPrimitiveNodeLogical("d32", opt, schema.NewDecimalLogicalType(7, 2), parquet.Types.Int32, -1, -1)),
		schema.MustPrimitive(schema.NewPrimitiveNodeLogical("d64", opt, schema.NewDecimalLogicalType(15, 3), parquet.Types.Int64, -1, -1)),
	}
	root := schema.MustGroup(schema.NewGroupNode("schema", parquet.Repetitions.Required, nodes, -1))
	stored := schemaMessage([]narrowField{{"half", halfType}, {"code", fixedSizeBinaryType(3)},
		{"uuid", fixedSizeBinaryType(16)}, {"d32", decimalType(32, 7, 2)}, {"d64", decimalType(64, 15, 3)}})
	stored = append(stored, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0) // the end of the stream

	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := file.NewParquetWriter(f, root, file.WithWriterProps(parquet.NewWriterProperties(parquet.WithDictionaryDefault(false))))
	if err := w.AppendKeyValueMetadata("ARROW:schema", base64.StdEncoding.EncodeToString(stored)); err != nil {
		return err
	}
	rg := w.AppendRowGroup()
	flba := func(vals func(i int) ([]byte, bool)) error {
		cw, err := rg.NextColumn()
		if err != nil {
			return err
		}
		var out []parquet.FixedLenByteArray
		defs := make([]int16, NarrowRows)
		for i := range defs {
			if v, ok := vals(i); ok {
				out = append(out, v)
				defs[i] = 1
			}
		}
		_, err = cw.(*file.FixedLenByteArrayColumnChunkWriter).WriteBatch(out, defs, nil)
		if err == nil {
			err = cw.Close()
		}
		return err
	}
	ints := func(vals []int64, wide bool) error {
		cw, err := rg.NextColumn()
		if err != nil {
			return err
		}
		var v32 []int32
		var v64 []int64
		defs := make([]int16, NarrowRows)
		for i, v := range vals {
			if v != NarrowDecNull {
				v32, v64 = append(v32, int32(v)), append(v64, v)
				defs[i] = 1
			}
		}
		if wide {
			_, err = cw.(*file.Int64ColumnChunkWriter).WriteBatch(v64, defs, nil)
		} else {
			_, err = cw.(*file.Int32ColumnChunkWriter).WriteBatch(v32, defs, nil)
		}
		if err == nil {
			err = cw.Close()
		}
		return err
	}
	bytesOf := func(vals []string) func(int) ([]byte, bool) {
		return func(i int) ([]byte, bool) { return []byte(vals[i]), vals[i] != "" }
	}
	for _, step := range []func() error{
		func() error {
			return flba(func(i int) ([]byte, bool) {
				return binary.LittleEndian.AppendUint16(nil, NarrowHalves[i]), NarrowHalves[i] != 0xFFFF
			})
		},
		func() error { return flba(bytesOf(NarrowCodes)) },
		func() error { return flba(bytesOf(NarrowUUIDs)) },
		func() error { return ints(NarrowDec32, false) },
		func() error { return ints(NarrowDec64, true) },
	} {
		if err := step(); err != nil {
			return err
		}
	}
	if err := rg.Close(); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return nil
}
