package dataset

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/arrowagg/arrowagg/column/arrow17"
)

// The record batches of an IPC file are decoded here rather than by Arrow's
// IPC reader, which copies every buffer out of the message body: a buffer
// is a view of the body where it lies (the mapped file), unless it is
// compressed (then it is decompressed into memory from the allocator) or
// misaligned (then it is copied). Every field node and buffer is checked
// against the body and against what the field's type needs before an array
// is made of it.
//
// Files with types this decoder does not lay out (list views, view types,
// run-end encoding, extension types, dictionaries inside dictionaries) are
// read as the stream they hold, by Arrow's reader.

// errNotInPlace says that a file's schema has types the in-place decoder
// does not handle.
var errNotInPlace = errors.New("types the in-place IPC decoder does not handle")

// maxExpansion bounds how many bytes one compressed byte decompresses to:
// a zstd RLE block (3 bytes of header, 1 byte) stands for at most 128 KiB,
// and LZ4 expands far less. A buffer claiming more is corrupt; its claim is
// refused before anything is allocated.
const maxExpansion = 1 << 15

// decompressedLimit is the most bytes a compressed buffer of n bytes (its
// 8-byte length prefix included) may declare.
func decompressedLimit(n int64) int64 { return max(n-8, 0)*maxExpansion + 1<<17 }

// ipcField is the layout of one field of the schema in a batch.
type ipcField struct {
	typ      arrow.DataType
	dictID   int64 // of a dictionary-encoded field; -1 otherwise
	children []ipcField
}

// ipcLayout lays out the fields of schema, whose dictionary ids the
// footer's Schema table fb gives; errNotInPlace when a type is not handled.
// dicts gets the value type of each dictionary id.
func ipcLayout(schema *arrow.Schema, fb fbTable, dicts map[int64]arrow.DataType) ([]ipcField, error) {
	const schemaFields = 1
	var start, n int64
	if fb.pos != 0 {
		var ok bool
		if start, n, ok = fb.vector(schemaFields, 4); !ok {
			return nil, errCorruptSchema
		}
	}
	out := make([]ipcField, schema.NumFields())
	for i, f := range schema.Fields() {
		var ft fbTable
		if int64(i) < n {
			var ok bool
			if ft, ok = fb.elem(start, int64(i)); !ok {
				return nil, errCorruptSchema
			}
		}
		var err error
		if out[i], err = layoutField(f.Type, ft, 0, dicts); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func layoutField(dt arrow.DataType, ft fbTable, depth int, dicts map[int64]arrow.DataType) (ipcField, error) {
	const fieldDictionary, fieldChildren, encodingID = 4, 5, 0
	f := ipcField{typ: dt, dictID: -1}
	if depth > maxNesting {
		return f, errNotInPlace
	}
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		if ft.b == nil || !flatType(t.ValueType) {
			return f, errNotInPlace
		}
		at, present, ok := ft.ref(fieldDictionary)
		if !ok || !present {
			return f, errNotInPlace
		}
		id, ok := fbTable{b: ft.b, pos: at}.scalar(encodingID, 8)
		if !ok {
			return f, errCorruptSchema
		}
		f.dictID = int64(id)
		if prev, ok := dicts[f.dictID]; ok && !arrow.TypeEqual(prev, t.ValueType) {
			return f, errNotInPlace
		}
		dicts[f.dictID] = t.ValueType
		return f, nil
	case *arrow.StructType, *arrow.ListType, *arrow.LargeListType, *arrow.FixedSizeListType, *arrow.MapType,
		*arrow.SparseUnionType, *arrow.DenseUnionType:
		var start, n int64
		if ft.b != nil {
			var ok bool
			if start, n, ok = ft.vector(fieldChildren, 4); !ok {
				return f, errCorruptSchema
			}
		}
		f.children = make([]ipcField, len(childFields(dt)))
		for i, c := range childFields(dt) {
			var ct fbTable
			if int64(i) < n {
				var ok bool
				if ct, ok = ft.elem(start, int64(i)); !ok {
					return f, errCorruptSchema
				}
			}
			var err error
			if f.children[i], err = layoutField(c.Type, ct, depth+1, dicts); err != nil {
				return f, err
			}
		}
		return f, nil
	}
	if !flatType(dt) {
		return f, errNotInPlace
	}
	return f, nil
}

// childFields are the fields of the children of a nested type.
func childFields(dt arrow.DataType) []arrow.Field {
	switch t := dt.(type) {
	case *arrow.StructType:
		return t.Fields()
	case arrow.UnionType:
		return t.Fields()
	case arrow.ListLikeType: // lists, maps
		return []arrow.Field{t.ElemField()}
	}
	return nil
}

// flatType reports whether the decoder lays out dt, a type without children.
func flatType(dt arrow.DataType) bool {
	if _, ok := dt.(*arrow17.NarrowDecimalType); ok {
		return true // decimal32, decimal64: laid out as fixed_size_binary
	}
	switch dt.ID() {
	case arrow.NULL, arrow.BINARY, arrow.STRING, arrow.LARGE_BINARY, arrow.LARGE_STRING:
		return true
	case arrow.EXTENSION, arrow.DICTIONARY:
		return false
	}
	_, ok := dt.(arrow.FixedWidthDataType)
	return ok
}

// decoders are the decompressors of one goroutine.
type decoders struct {
	zstd *zstd.Decoder
	lz4  *lz4.Reader
}

var decoderPool = sync.Pool{New: func() any { return &decoders{} }}

// decompress fills out with the decompressed src; codec 0 is LZ4 frame, 1
// zstd. The decoders run in the caller's goroutine, a piece of pieceBytes at
// a time (a buffer may hold gigabytes), stopping with ctx's error when ctx
// is done.
func decompress(ctx context.Context, codec uint64, src, out []byte) error {
	d := decoderPool.Get().(*decoders)
	defer decoderPool.Put(d)
	var r io.Reader
	switch codec {
	case 0:
		if d.lz4 == nil {
			d.lz4 = lz4.NewReader(nil)
		}
		d.lz4.Reset(bytes.NewReader(src))
		r = d.lz4
	case 1:
		if d.zstd == nil {
			dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
			if err != nil {
				return err
			}
			d.zstd = dec
		}
		if err := d.zstd.Reset(bytes.NewReader(src)); err != nil {
			return err
		}
		r = d.zstd
	default:
		return fmt.Errorf("unknown compression codec %d", codec)
	}
	for read := 0; read < len(out); {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := io.ReadFull(r, out[read:min(read+pieceBytes, len(out))])
		read += n
		if err == io.EOF && read > 0 {
			err = io.ErrUnexpectedEOF // (as one io.ReadFull of the whole buffer says it)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// batchDecoder decodes the arrays of one RecordBatch table.
type batchDecoder struct {
	rb     fbTable
	body   []byte
	mem    memory.Allocator
	codec  int64 // -1: uncompressed
	length int64

	nodes, nbuf   int64 // where the vectors start
	nNodes, nBufs int64
	inode, ibuf   int64
	dicts         map[int64]*array.Data
	// unionValidity: the message is of a metadata version before V5
	// (Arrow 1.0), whose unions have a validity buffer.
	unionValidity bool
}

// metadataV5 is the MetadataVersion of Arrow 1.0 and later (Schema.fbs).
const metadataV5 = 4

// newBatchDecoder decodes record batch rb, of a message of the metadata
// version given, whose body is body.
func newBatchDecoder(rb fbTable, body []byte, mem memory.Allocator, dicts map[int64]*array.Data, version uint64) (*batchDecoder, error) {
	const rbLength, rbNodes, rbBuffers, rbCompression = 0, 1, 2, 3
	const compCodec = 0
	d := &batchDecoder{rb: rb, body: body, mem: mem, codec: -1, dicts: dicts, unionValidity: version < metadataV5}
	length, ok := rb.scalar(rbLength, 8)
	var ok2, ok3 bool
	d.nodes, d.nNodes, ok2 = rb.vector(rbNodes, 16)
	d.nbuf, d.nBufs, ok3 = rb.vector(rbBuffers, 16)
	if !ok || !ok2 || !ok3 || int64(length) < 0 || int64(length) > 1<<40 {
		return nil, errors.New("corrupt Arrow IPC file: malformed record batch")
	}
	d.length = int64(length)
	at, present, ok := rb.ref(rbCompression)
	if !ok {
		return nil, errors.New("corrupt Arrow IPC file: malformed record batch")
	}
	if present {
		c, ok := fbTable{b: rb.b, pos: at}.scalar(compCodec, 1)
		if !ok || c > 1 {
			return nil, fmt.Errorf("corrupt Arrow IPC file: compression codec %d", c)
		}
		d.codec = int64(c)
	}
	return d, nil
}

// allocates is what decoding the batch allocates: its compressed buffers
// decompressed (at the sizes they declare, those that are not corrupt) and
// its misaligned buffers copied.
func (d *batchDecoder) allocates() int64 {
	var total int64
	for i := int64(0); i < d.nBufs; i++ {
		at := d.nbuf + 16*i
		o, _ := d.rb.uint(at, 8)
		l, _ := d.rb.uint(at+8, 8)
		off, n := int64(o), int64(l)
		if off < 0 || n <= 0 || n > int64(len(d.body))-off {
			continue // (corrupt: the decoder says so)
		}
		raw := d.body[off : off+n]
		if d.codec >= 0 {
			if n < 8 {
				continue
			}
			size := int64(binary.LittleEndian.Uint64(raw))
			if size != -1 {
				if size > 0 && size <= decompressedLimit(n) {
					total += size
				}
				continue
			}
			raw = raw[8:]
		}
		if len(raw) > 0 && uintptr(unsafe.Pointer(unsafe.SliceData(raw)))%8 != 0 {
			total += int64(len(raw))
		}
	}
	return total
}

func (d *batchDecoder) node() (length, nulls int, err error) {
	if d.inode >= d.nNodes {
		return 0, 0, fmt.Errorf("corrupt Arrow IPC file: %d field nodes for more fields", d.nNodes)
	}
	at := d.nodes + 16*d.inode
	d.inode++
	l, _ := d.rb.uint(at, 8)
	n, _ := d.rb.uint(at+8, 8)
	if int64(l) < 0 || int64(l) > 1<<40 || int64(n) < 0 || int64(n) > int64(l) {
		return 0, 0, fmt.Errorf("corrupt Arrow IPC file: a field node of %d values, %d of them null", int64(l), int64(n))
	}
	return int(l), int(n), nil
}

// skip passes over the next buffer.
func (d *batchDecoder) skip() { d.ibuf++ }

// buffer returns the next buffer, of at least need bytes: a view of the
// body, or decompressed memory of the allocator. nil for an empty buffer.
func (d *batchDecoder) buffer(ctx context.Context, need int64, what string) (*memory.Buffer, error) {
	if d.ibuf >= d.nBufs {
		return nil, fmt.Errorf("corrupt Arrow IPC file: %d buffers for more", d.nBufs)
	}
	at := d.nbuf + 16*d.ibuf
	d.ibuf++
	o, _ := d.rb.uint(at, 8)
	l, _ := d.rb.uint(at+8, 8)
	off, n := int64(o), int64(l)
	if off < 0 || n < 0 || n > int64(len(d.body))-off {
		return nil, fmt.Errorf("corrupt Arrow IPC file: buffer at %d of %d bytes in a body of %d", off, n, len(d.body))
	}
	raw := d.body[off : off+n : off+n]
	var buf *memory.Buffer
	switch {
	case n == 0:
	case d.codec >= 0:
		if n < 8 {
			return nil, fmt.Errorf("corrupt Arrow IPC file: a compressed buffer of %d bytes", n)
		}
		size := int64(binary.LittleEndian.Uint64(raw))
		if size == -1 {
			raw = raw[8:]
			break
		}
		if size < 0 || size > decompressedLimit(n) {
			return nil, fmt.Errorf("corrupt Arrow IPC file: a compressed buffer of %d bytes declares %d bytes uncompressed (at most %d can come out of it)", n, size, decompressedLimit(n))
		}
		buf = memory.NewResizableBuffer(d.mem)
		buf.Resize(int(size))
		if err := decompress(ctx, uint64(d.codec), raw[8:], buf.Bytes()); err != nil {
			buf.Release()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("corrupt Arrow IPC file: decompressing a buffer of %d bytes: %w", n, err)
		}
		raw = buf.Bytes()
	}
	if buf == nil && len(raw) > 0 && uintptr(unsafe.Pointer(unsafe.SliceData(raw)))%8 != 0 {
		// Misaligned: the backends read values as words.
		buf = memory.NewResizableBuffer(d.mem)
		buf.Resize(len(raw))
		copy(buf.Bytes(), raw)
	}
	if int64(len(raw)) < need {
		if buf != nil {
			buf.Release()
		}
		return nil, fmt.Errorf("corrupt Arrow IPC file: a %s buffer of %d bytes where %d are needed", what, len(raw), need)
	}
	if buf == nil {
		buf = memory.NewBufferBytes(raw)
	}
	return buf, nil
}

// array decodes the next array, of field f, stopping with ctx's error when
// ctx is done.
func (d *batchDecoder) array(ctx context.Context, f *ipcField) (_ arrow.ArrayData, err error) {
	length, nulls, err := d.node()
	if err != nil {
		return nil, err
	}
	dt := f.typ
	if dt.ID() == arrow.NULL {
		return array.NewData(dt, length, nil, nil, length, 0), nil // no buffers, as Arrow's reader makes it
	}
	if u, ok := dt.(arrow.UnionType); ok {
		return d.union(ctx, f, u, length, nulls)
	}
	var bufs []*memory.Buffer
	defer func() {
		for _, b := range bufs {
			if b != nil {
				b.Release()
			}
		}
	}()
	if nulls == 0 {
		d.skip()
		bufs = append(bufs, nil)
	} else {
		b, err := d.buffer(ctx, bitutil.BytesForBits(int64(length)), "validity")
		if err != nil {
			return nil, err
		}
		bufs = append(bufs, b)
	}
	fixed := func(bits int, always bool) error {
		if length == 0 && !always {
			d.skip()
			bufs = append(bufs, nil)
			return nil
		}
		b, err := d.buffer(ctx, bitutil.BytesForBits(int64(length)*int64(bits)), "values")
		bufs = append(bufs, b)
		return err
	}
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		dict, ok := d.dicts[f.dictID]
		if !ok {
			return nil, fmt.Errorf("corrupt Arrow IPC file: no dictionary %d before this batch", f.dictID)
		}
		if err := fixed(t.IndexType.(arrow.FixedWidthDataType).BitWidth(), false); err != nil {
			return nil, err
		}
		return array.NewDataWithDictionary(dt, length, bufs, nulls, 0, dict), nil
	case *arrow.StructType:
		children := make([]arrow.ArrayData, len(f.children))
		defer func() {
			for _, c := range children {
				if c != nil {
					c.Release()
				}
			}
		}()
		for i := range f.children {
			if children[i], err = d.array(ctx, &f.children[i]); err != nil {
				return nil, err
			}
		}
		return array.NewData(dt, length, bufs, children, nulls, 0), nil
	case *arrow.ListType, *arrow.LargeListType, *arrow.MapType, *arrow.FixedSizeListType:
		// Not aggregated, but laid out: the buffers of the fields after
		// them follow theirs.
		if dt.ID() != arrow.FIXED_SIZE_LIST {
			w := int64(4)
			if dt.ID() == arrow.LARGE_LIST {
				w = 8
			}
			need := int64(0)
			if length > 0 {
				need = (int64(length) + 1) * w
			}
			b, err := d.buffer(ctx, need, "offsets")
			bufs = append(bufs, b)
			if err != nil {
				return nil, err
			}
		}
		child, err := d.array(ctx, &f.children[0])
		if err != nil {
			return nil, err
		}
		defer child.Release()
		return array.NewData(dt, length, bufs, []arrow.ArrayData{child}, nulls, 0), nil
	case *arrow.BinaryType, *arrow.StringType, *arrow.LargeBinaryType, *arrow.LargeStringType:
		w := int64(4)
		if dt.ID() == arrow.LARGE_BINARY || dt.ID() == arrow.LARGE_STRING {
			w = 8
		}
		need := int64(0)
		if length > 0 {
			need = (int64(length) + 1) * w
		}
		b, err := d.buffer(ctx, need, "offsets")
		bufs = append(bufs, b)
		if err != nil {
			return nil, err
		}
		b, err = d.buffer(ctx, 0, "data")
		bufs = append(bufs, b)
		if err != nil {
			return nil, err
		}
		return array.NewData(dt, length, bufs, nil, nulls, 0), nil
	case *arrow.FixedSizeBinaryType:
		if err := fixed(t.BitWidth(), true); err != nil {
			return nil, err
		}
		return array.NewData(dt, length, bufs, nil, nulls, 0), nil
	case *arrow17.NarrowDecimalType:
		if err := fixed(int(t.BitWidth), true); err != nil {
			return nil, err
		}
		return array.NewData(dt, length, bufs, nil, nulls, 0), nil
	case arrow.FixedWidthDataType:
		if err := fixed(t.BitWidth(), false); err != nil {
			return nil, err
		}
		return array.NewData(dt, length, bufs, nil, nulls, 0), nil
	}
	return nil, errNotInPlace
}

// union decodes a union array of field f, of length values, nulls of them
// null in its node: its type codes (and offsets, dense), then its children.
// A union has no validity buffer since metadata V5; before, it has one,
// which is passed over where no value is null (and refused where some are,
// as Arrow's readers do).
func (d *batchDecoder) union(ctx context.Context, f *ipcField, u arrow.UnionType, length, nulls int) (_ arrow.ArrayData, err error) {
	if d.unionValidity {
		if nulls > 0 {
			return nil, fmt.Errorf("a union column with a validity bitmap of its own (%d nulls; Arrow IPC before 1.0): %w", nulls, arrow.ErrNotImplemented)
		}
		d.skip()
	}
	bufs := []*memory.Buffer{nil}
	defer func() {
		for _, b := range bufs {
			if b != nil {
				b.Release()
			}
		}
	}()
	next := func(width int64, what string) error {
		if length == 0 {
			d.skip()
			bufs = append(bufs, nil)
			return nil
		}
		b, err := d.buffer(ctx, int64(length)*width, what)
		bufs = append(bufs, b)
		return err
	}
	if err := next(1, "type codes"); err != nil {
		return nil, err
	}
	if u.Mode() == arrow.DenseMode {
		if err := next(4, "offsets"); err != nil {
			return nil, err
		}
	}
	children := make([]arrow.ArrayData, len(f.children))
	defer func() {
		for _, c := range children {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i := range f.children {
		if children[i], err = d.array(ctx, &f.children[i]); err != nil {
			return nil, err
		}
		if u.Mode() == arrow.SparseMode && children[i].Len() < length {
			return nil, fmt.Errorf("corrupt Arrow IPC file: a sparse union of %d values with a child of %d", length, children[i].Len())
		}
	}
	if bufs[1] == nil { // (Arrow's readers make an empty one)
		bufs[1] = memory.NewBufferBytes([]byte{})
	}
	return array.NewData(u, length, bufs, children, 0, 0), nil
}

// record decodes a record batch of schema with fields, stopping with ctx's
// error when ctx is done.
func (d *batchDecoder) record(ctx context.Context, schema *arrow.Schema, fields []ipcField) (rec arrow.Record, err error) {
	cols := make([]arrow.Array, len(fields))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i := range fields {
		data, err := d.array(ctx, &fields[i])
		if err != nil {
			return nil, err
		}
		if err := checkColumnLength("file", schema.Field(i).Name, int64(data.Len()), d.length); err != nil {
			data.Release()
			return nil, err
		}
		cols[i] = array.MakeFromData(data)
		data.Release()
	}
	return array.NewRecord(schema, cols, d.length), nil
}

// dictionary decodes the values of a dictionary batch of value type dt,
// stopping with ctx's error when ctx is done.
func (d *batchDecoder) dictionary(ctx context.Context, dt arrow.DataType) (*array.Data, error) {
	f := ipcField{typ: dt, dictID: -1}
	data, err := d.array(ctx, &f)
	if err != nil {
		return nil, err
	}
	return data.(*array.Data), nil
}
