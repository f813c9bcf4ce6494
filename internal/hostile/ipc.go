package hostile

import (
	"bufio"
	"encoding/binary"
	"os"

	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/pierrec/lz4/v4"
)

// Arrow IPC streams and files written message by message with the
// flatbuffers builder: record batches whose buffers declare what a case
// needs (a compressed buffer's length prefix, a body's length), at sizes
// arrow-go's writer, which holds the arrays it writes, cannot make.

// Arrow's enumerations, as Schema.fbs and Message.fbs number them.
const (
	ipcV5          = 4 // MetadataVersion V5
	ipcSchema      = 1 // MessageHeader Schema
	ipcRecordBatch = 3 // MessageHeader RecordBatch
	ipcTypeInt     = 2 // the Type union's Int

	// BodyCompression codecs; ipcNone: an uncompressed batch.
	ipcLZ4  = 0
	ipcZstd = 1
	ipcNone = -1
)

// ipcMagic starts and ends an IPC file.
const ipcMagic = "ARROW1"

// int32Schema builds a Schema table of one nullable int32 field named name.
func int32Schema(b *flatbuffers.Builder, name string) flatbuffers.UOffsetT {
	nameAt := b.CreateString(name)
	b.StartObject(2) // Int
	b.PrependInt32Slot(0, 32, 0)
	b.PrependBoolSlot(1, true, false)
	intAt := b.EndObject()
	b.StartVector(4, 0, 4)
	children := b.EndVector(0)
	b.StartObject(7) // Field
	b.PrependUOffsetTSlot(0, nameAt, 0)
	b.PrependBoolSlot(1, true, false)
	b.PrependByteSlot(2, ipcTypeInt, 0)
	b.PrependUOffsetTSlot(3, intAt, 0)
	b.PrependUOffsetTSlot(5, children, 0)
	field := b.EndObject()
	b.StartVector(4, 1, 4)
	b.PrependUOffsetT(field)
	fields := b.EndVector(1)
	b.StartObject(4) // Schema (little-endian: the default)
	b.PrependUOffsetTSlot(1, fields, 0)
	return b.EndObject()
}

// int32Batch builds a RecordBatch table of rows rows of one int32 column
// without nulls: no validity buffer, then a values buffer of valuesLen
// bytes at the start of the body, compressed with codec (or ipcNone).
func int32Batch(b *flatbuffers.Builder, rows, valuesLen int64, codec int) flatbuffers.UOffsetT {
	var comp flatbuffers.UOffsetT
	if codec != ipcNone {
		b.StartObject(2) // BodyCompression, method BUFFER (the default)
		b.PrependInt8Slot(0, int8(codec), 0)
		comp = b.EndObject()
	}
	b.StartVector(16, 1, 8) // FieldNode structs: length, null count
	b.Prep(8, 16)
	b.PrependInt64(0)
	b.PrependInt64(rows)
	nodes := b.EndVector(1)
	b.StartVector(16, 2, 8) // Buffer structs, last first: offset, length
	b.Prep(8, 16)
	b.PrependInt64(valuesLen)
	b.PrependInt64(0)
	b.Prep(8, 16)
	b.PrependInt64(0)
	b.PrependInt64(0)
	buffers := b.EndVector(2)
	b.StartObject(5) // RecordBatch
	b.PrependInt64Slot(0, rows, 0)
	b.PrependUOffsetTSlot(1, nodes, 0)
	b.PrependUOffsetTSlot(2, buffers, 0)
	if codec != ipcNone {
		b.PrependUOffsetTSlot(3, comp, 0)
	}
	return b.EndObject()
}

// ipcMessage is the flatbuffer of a Message of header type kind, whose
// header header builds, announcing a body of bodyLen bytes.
func ipcMessage(kind byte, bodyLen int64, header func(*flatbuffers.Builder) flatbuffers.UOffsetT) []byte {
	b := flatbuffers.NewBuilder(256)
	h := header(b)
	b.StartObject(5) // Message
	b.PrependInt16Slot(0, ipcV5, 0)
	b.PrependByteSlot(1, kind, 0)
	b.PrependUOffsetTSlot(2, h, 0)
	b.PrependInt64Slot(3, bodyLen, 0)
	b.Finish(b.EndObject())
	return b.FinishedBytes()
}

// ipcBlock is where a message of an IPC file lies (a footer's Block).
type ipcBlock struct {
	offset  int64
	metaLen int32 // the framing and the padded metadata
	bodyLen int64
}

// ipcWriter writes encapsulated IPC messages: the continuation marker, the
// metadata's length, the metadata padded to 8 bytes, then the body.
type ipcWriter struct {
	f   *os.File
	w   *bufio.Writer
	pos int64
}

func newIPC(path string) (*ipcWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &ipcWriter{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

func (w *ipcWriter) write(b []byte) {
	w.w.Write(b) // (errors stick in the bufio.Writer; close returns them)
	w.pos += int64(len(b))
}

func (w *ipcWriter) pad() {
	var zero [8]byte
	w.write(zero[:(8-w.pos%8)%8])
}

// message writes the message of metadata meta and body body (the pieces
// one after the other, padded to 8 bytes; the metadata's bodyLength says
// what it says) and returns its block.
func (w *ipcWriter) message(meta []byte, body ...[]byte) ipcBlock {
	b := ipcBlock{offset: w.pos}
	padded := (len(meta) + 8 + 7) &^ 7
	var head [8]byte
	binary.LittleEndian.PutUint32(head[:], 0xFFFFFFFF)
	binary.LittleEndian.PutUint32(head[4:], uint32(padded-8))
	w.write(head[:])
	w.write(meta)
	w.pad()
	b.metaLen = int32(padded)
	start := w.pos
	for _, p := range body {
		w.write(p)
	}
	w.pad()
	b.bodyLen = w.pos - start
	return b
}

// end writes the end-of-stream marker.
func (w *ipcWriter) end() {
	w.write([]byte{0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0})
}

// footer writes an IPC file's footer (the schema of int32Schema(name) and
// the record batches at batches), its length and the closing magic.
func (w *ipcWriter) footer(name string, batches []ipcBlock) {
	b := flatbuffers.NewBuilder(256)
	schema := int32Schema(b, name)
	b.StartVector(24, len(batches), 8)
	for i := len(batches) - 1; i >= 0; i-- {
		bl := batches[i]
		b.Prep(8, 24)
		b.PrependInt64(bl.bodyLen)
		b.Pad(4)
		b.PrependInt32(bl.metaLen)
		b.PrependInt64(bl.offset)
	}
	blocks := b.EndVector(len(batches))
	b.StartVector(24, 0, 8)
	dicts := b.EndVector(0)
	b.StartObject(5) // Footer
	b.PrependInt16Slot(0, ipcV5, 0)
	b.PrependUOffsetTSlot(1, schema, 0)
	b.PrependUOffsetTSlot(2, dicts, 0)
	b.PrependUOffsetTSlot(3, blocks, 0)
	b.Finish(b.EndObject())
	fb := b.FinishedBytes()
	w.write(fb)
	w.write(binary.LittleEndian.AppendUint32(nil, uint32(len(fb))))
	w.write([]byte(ipcMagic))
}

func (w *ipcWriter) close() error {
	if err := w.w.Flush(); err != nil {
		w.f.Close()
		return err
	}
	return w.f.Close()
}

// writeInt32IPC writes an IPC stream (file: an IPC file) of one int32
// column "z" and one record batch of rows rows whose values buffer is the
// 8-byte little-endian length prefix claim followed by comp, compressed
// with codec.
func writeInt32IPC(path string, file bool, rows int64, codec int, claim int64, comp []byte) error {
	w, err := newIPC(path)
	if err != nil {
		return err
	}
	if file {
		w.write([]byte(ipcMagic + "\x00\x00"))
	}
	const name = "z"
	w.message(ipcMessage(ipcSchema, 0, func(b *flatbuffers.Builder) flatbuffers.UOffsetT { return int32Schema(b, name) }))
	valuesLen := int64(8 + len(comp))
	bodyLen := (valuesLen + 7) &^ 7
	meta := ipcMessage(ipcRecordBatch, bodyLen, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		return int32Batch(b, rows, valuesLen, codec)
	})
	batch := w.message(meta, binary.LittleEndian.AppendUint64(nil, uint64(claim)), comp)
	w.end()
	if file {
		w.footer(name, []ipcBlock{batch})
	}
	return w.close()
}

// writeBodyHeader writes the start of an IPC stream: the schema of one
// int32 column "z", then the metadata of an uncompressed record batch whose
// body (its values buffer) declares bodyLen bytes; the body is not there.
func writeBodyHeader(path string, bodyLen int64) error {
	w, err := newIPC(path)
	if err != nil {
		return err
	}
	w.message(ipcMessage(ipcSchema, 0, func(b *flatbuffers.Builder) flatbuffers.UOffsetT { return int32Schema(b, "z") }))
	w.message(ipcMessage(ipcRecordBatch, bodyLen, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		return int32Batch(b, bodyLen/4, bodyLen, ipcNone)
	}))
	return w.close()
}

// lz4Zeros is n zero bytes as an LZ4 frame (Arrow's LZ4_FRAME codec).
func lz4Zeros(n int) ([]byte, error) {
	var out sliceWriter
	w := lz4.NewWriter(&out)
	if _, err := w.Write(make([]byte, n)); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.b, nil
}
