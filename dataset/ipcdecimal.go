package dataset

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowagg/arrowagg/column/arrow17"
)

// decimal32 and decimal64 (Arrow format 1.5, Arrow 18 and later) are Decimal
// types of bitWidth 32 and 64 in the schema, which arrow-go v17's IPC reader
// refuses. Their arrays are laid out as fixed_size_binary(4) and (8) arrays
// are: a validity bitmap and the values. So the guard, which holds the
// schema message before the reader sees it, rewrites each such field's type,
// in place, as FixedSizeBinary of that width (the type's union tag, and the
// Decimal table's precision read as the byteWidth), and records what it was;
// the reader then reads their batches as fixed_size_binary arrays, and the
// stream's schema and records are retyped as arrow17.NarrowDecimalType (an
// extension type over the same buffers) before anything reads them.
//
// The fields rewritten are those of the schema, of structs at any depth,
// dictionary-encoded or not. A decimal32 or decimal64 inside a list, map,
// union or run-end encoded column stays fixed_size_binary: those columns
// are counted, their values not read.

// narrowField is a decimal32 or decimal64 field of a stream's schema: its
// path of child indices from the schema down, and its type.
type narrowField struct {
	path []int
	typ  *arrow17.NarrowDecimalType
}

// Flatbuffer numbers of the Schema.fbs tables and fields read here.
const (
	fbTypeDecimal         = 7  // the Type union's Decimal
	fbTypeFixedSizeBinary = 15 // the Type union's FixedSizeBinary
	fbSchemaFields        = 1
	fbFieldTypeType       = 2
	fbFieldType           = 3
	fbFieldChildren       = 5
	fbDecimalPrecision    = 0
	fbDecimalScale        = 1
	fbDecimalBitWidth     = 2
)

// narrowSchemaMessage rewrites the decimal32 and decimal64 fields of the
// schema message whose metadata is meta (checked by checkMessage) and
// returns them.
func narrowSchemaMessage(meta []byte) ([]narrowField, error) {
	const msgHeaderType, msgHeader = 1, 2
	msg, ok := fbRoot(meta)
	if !ok {
		return nil, nil
	}
	if kind, ok := msg.scalar(msgHeaderType, 1); !ok || kind != headerSchema {
		return nil, nil
	}
	at, present, ok := msg.ref(msgHeader)
	if !ok || !present {
		return nil, nil
	}
	return rewriteNarrowDecimals(fbTable{b: meta, pos: at})
}

// rewriteNarrowDecimals rewrites, in place, the decimal32 and decimal64
// fields of the Schema table schema as fixed_size_binary fields, and
// returns them (checkSchema has checked the table's vectors).
func rewriteNarrowDecimals(schema fbTable) ([]narrowField, error) {
	return narrowWalk{seen: map[int64]*arrow17.NarrowDecimalType{}, budget: int64(len(schema.b)) / 4}.schema(schema)
}

func (w narrowWalk) schema(schema fbTable) ([]narrowField, error) {
	start, n, ok := schema.vector(fbSchemaFields, 4)
	if !ok {
		return nil, errCorruptSchema
	}
	for k := int64(0); k < n; k++ {
		f, ok := schema.elem(start, k)
		if !ok {
			return nil, errCorruptSchema
		}
		w.path = append(w.path[:0], int(k))
		if err := w.field(f, 0); err != nil {
			return nil, err
		}
	}
	return w.out, nil
}

type narrowWalk struct {
	path   []int
	out    []narrowField
	seen   map[int64]*arrow17.NarrowDecimalType // Decimal tables rewritten, by position (a table may be shared)
	budget int64                                // fields visited, at most (children may be shared)
	// widen: the fields are rewritten as decimal128 (their bit width), not
	// as fixed_size_binary (widenStoredDecimals).
	widen bool
}

func (w *narrowWalk) field(f fbTable, depth int) error {
	if w.budget--; w.budget < 0 || depth > maxNesting {
		return errCorruptSchema
	}
	tagAt, ok := f.field(fbFieldTypeType)
	if !ok {
		return errCorruptSchema
	}
	if tag, ok := f.uint(tagAt, 1); tagAt != 0 && ok && tag == fbTypeDecimal {
		if err := w.decimal(f, tagAt); err != nil {
			return err
		}
	}
	start, n, ok := f.vector(fbFieldChildren, 4)
	if !ok {
		return errCorruptSchema
	}
	for k := int64(0); k < n; k++ {
		c, ok := f.elem(start, k)
		if !ok {
			return errCorruptSchema
		}
		w.path = append(w.path, int(k))
		err := w.field(c, depth+1)
		w.path = w.path[:len(w.path)-1]
		if err != nil {
			return err
		}
	}
	return nil
}

// decimal rewrites the Decimal field f, whose type tag is at tagAt, when it
// is a decimal32 or decimal64.
func (w *narrowWalk) decimal(f fbTable, tagAt int64) error {
	at, present, ok := f.ref(fbFieldType)
	if !ok {
		return errCorruptSchema
	}
	if !present {
		return nil // the reader says what is wrong
	}
	dec := fbTable{b: f.b, pos: at}
	nt, done := w.seen[at]
	if !done {
		width := int32(128) // absent: the default
		bitsAt, ok := dec.field(fbDecimalBitWidth)
		if !ok {
			return errCorruptSchema
		}
		if bitsAt != 0 {
			bits, ok := dec.uint(bitsAt, 4)
			if !ok {
				return errCorruptSchema
			}
			width = int32(bits)
		}
		if width != 32 && width != 64 {
			return nil
		}
		precAt, ok := dec.field(fbDecimalPrecision)
		if !ok || precAt+4 > int64(len(dec.b)) {
			return errCorruptSchema
		}
		if precAt == 0 {
			return fmt.Errorf("corrupt Arrow IPC stream: decimal%d field without a precision", width)
		}
		prec := int32(binary.LittleEndian.Uint32(dec.b[precAt:]))
		scale, ok := dec.scalar(fbDecimalScale, 4)
		if !ok {
			return errCorruptSchema
		}
		var err error
		if nt, err = arrow17.NewNarrowDecimalType(width, prec, int32(scale)); err != nil {
			return err
		}
		if w.widen {
			// decimal128: the same precision and scale.
			binary.LittleEndian.PutUint32(dec.b[bitsAt:], 128)
		} else {
			// The Decimal table read as a FixedSizeBinary table: its
			// field 0, the precision, is the byteWidth.
			binary.LittleEndian.PutUint32(dec.b[precAt:], uint32(width/8))
		}
		w.seen[at] = nt
	}
	if !w.widen {
		f.b[tagAt] = fbTypeFixedSizeBinary
	}
	w.out = append(w.out, narrowField{path: append([]int(nil), w.path...), typ: nt})
	return nil
}

// narrowSchema is schema, as arrow-go's reader read it from a rewritten
// schema message (or pqarrow from a rewritten stored schema), with the types
// of the fields of narrow as they were (arrow17.NarrowDecimalType); fields
// under a type other than a struct keep the type the reader gave them.
func narrowSchema(schema *arrow.Schema, narrow []narrowField) *arrow.Schema {
	if len(narrow) == 0 {
		return schema
	}
	fields := append([]arrow.Field(nil), schema.Fields()...)
	for _, nf := range narrow {
		if nf.path[0] >= len(fields) {
			continue // (not the schema the fields were found in)
		}
		f := &fields[nf.path[0]]
		f.Type = narrowType(f.Type, nf.path[1:], nf.typ)
	}
	md := schema.Metadata()
	return arrow.NewSchemaWithEndian(fields, &md, schema.Endianness())
}

// narrowType is dt with the fixed_size_binary (or decimal128 of the same
// precision and scale) type at path (child indices) replaced by nt, where
// the path goes through structs (and dictionaries) alone.
func narrowType(dt arrow.DataType, path []int, nt *arrow17.NarrowDecimalType) arrow.DataType {
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		if len(path) > 0 {
			return dt
		}
		if v, ok := t.ValueType.(*arrow.FixedSizeBinaryType); ok && v.ByteWidth == int(nt.BitWidth/8) {
			return &arrow.DictionaryType{IndexType: t.IndexType, ValueType: nt, Ordered: t.Ordered}
		}
	case *arrow.FixedSizeBinaryType:
		if len(path) == 0 && t.ByteWidth == int(nt.BitWidth/8) {
			return nt
		}
	case *arrow.Decimal128Type: // pqarrow's, of a Parquet column (widenStoredDecimals)
		if len(path) == 0 && t.Precision == nt.Precision && t.Scale == nt.Scale {
			return nt
		}
	case *arrow.StructType:
		if len(path) == 0 || path[0] >= t.NumFields() {
			return dt
		}
		fields := append([]arrow.Field(nil), t.Fields()...)
		fields[path[0]].Type = narrowType(fields[path[0]].Type, path[1:], nt)
		return arrow.StructOf(fields...)
	}
	return dt
}

// narrowRecord is rec, read as schema's fixed_size_binary types, retyped as
// narrowed (narrowSchema) over the same buffers. It releases rec.
func narrowRecord(rec arrow.Record, narrowed *arrow.Schema) arrow.Record {
	defer rec.Release()
	cols := make([]arrow.Array, rec.NumCols())
	for i, c := range rec.Columns() {
		d := retype(c.Data(), narrowed.Field(i).Type)
		cols[i] = array.MakeFromData(d)
		d.Release()
	}
	out := array.NewRecord(narrowed, cols, rec.NumRows())
	for _, c := range cols {
		c.Release()
	}
	return out
}

// retype is d as an array of type dt, which differs from d's by
// NarrowDecimalTypes where d has fixed_size_binary types (narrowType): the
// same buffers. The caller releases the result.
func retype(d arrow.ArrayData, dt arrow.DataType) arrow.ArrayData {
	if arrow.TypeEqual(d.DataType(), dt) {
		d.Retain()
		return d
	}
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		dict := retype(d.Dictionary(), t.ValueType)
		defer dict.Release()
		return array.NewDataWithDictionary(dt, d.Len(), d.Buffers(), d.NullN(), d.Offset(), dict.(*array.Data))
	case *arrow.StructType:
		children := make([]arrow.ArrayData, len(d.Children()))
		for i, c := range d.Children() {
			children[i] = retype(c, t.Field(i).Type)
		}
		out := array.NewData(dt, d.Len(), d.Buffers(), children, d.NullN(), d.Offset())
		for _, c := range children {
			c.Release()
		}
		return out
	}
	return array.NewData(dt, d.Len(), d.Buffers(), d.Children(), d.NullN(), d.Offset())
}

// widenStoredDecimals rewrites, in place, the decimal32 and decimal64 fields
// of the Arrow schema a Parquet writer stored in the footer (stream, an IPC
// stream whose schema message checkStoredSchema has checked) as decimal128
// of the same precision and scale, and returns them. Arrow C++ 18 and later
// stores them for INT32 and INT64 DECIMAL columns; pqarrow, which reads
// those as decimal128, refuses the whole schema otherwise ("invalid decimal
// bitwidth"). The schema pqarrow then makes is retyped with narrowSchema:
// the page path reads their INT32 and INT64 values as the decimal32 and
// decimal64 values they are, and pqarrow's decimal128 arrays aggregate
// into states of the same family.
func widenStoredDecimals(stream []byte) ([]narrowField, error) {
	meta := stream
	if len(meta) >= 4 && binary.LittleEndian.Uint32(meta) == continuation {
		meta = meta[4:]
	}
	if len(meta) < 4 {
		return nil, nil
	}
	n := int64(binary.LittleEndian.Uint32(meta))
	if n <= 0 || n > int64(len(meta))-4 {
		return nil, nil
	}
	meta = meta[4 : 4+n]
	const msgHeaderType, msgHeader = 1, 2
	msg, ok := fbRoot(meta)
	if !ok {
		return nil, nil
	}
	if kind, ok := msg.scalar(msgHeaderType, 1); !ok || kind != headerSchema {
		return nil, nil
	}
	at, present, ok := msg.ref(msgHeader)
	if !ok || !present {
		return nil, nil
	}
	w := narrowWalk{seen: map[int64]*arrow17.NarrowDecimalType{}, budget: int64(len(meta)) / 4, widen: true}
	return w.schema(fbTable{b: meta, pos: at})
}
