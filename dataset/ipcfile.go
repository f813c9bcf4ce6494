package dataset

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// An Arrow IPC file is "ARROW1", padding to 8 bytes, the stream format, the
// footer, the footer's int32 length and "ARROW1" again. The footer is a
// flatbuffer: the schema and the blocks of the dictionary and record
// batches (offset, metadata length and body length of each message).
//
// A file is read in place from its footer: the file is mapped into memory
// (or, where it cannot be, each block is read with a positioned read into a
// reused buffer), every block and every buffer is checked against the file
// before it is touched, and the arrays of a batch are views of the mapped
// bytes; only compressed buffers are decompressed, in parallel. See
// ipcfold.go for the aggregation.

const (
	ipcFileStart   = 8      // "ARROW1" and its padding
	ipcFileTrailer = 4 + 6  // footer length, magic
	blockSize      = 8 + 16 // Block struct: offset, metadata length (+4 padding), body length
)

// ipcBlock is one message of an IPC file, as its footer indexes it.
type ipcBlock struct {
	offset int64 // of the message's framing
	meta   int64 // framing and metadata
	body   int64
	dict   bool // a dictionary batch (else a record batch)
}

// ipcFooter is what the footer of an IPC file says, checked against the
// file's size.
type ipcFooter struct {
	blocks []ipcBlock // dictionary and record batches in file order
	end    int64      // where the footer starts: no block goes past it
	schema fbTable    // the footer's Schema table (pos 0: none)
}

// ipcFileStream returns the stream part of the IPC file r of size bytes.
func ipcFileStream(r io.ReaderAt, size int64) (*io.SectionReader, error) {
	end, err := ipcFooterStart(r, size)
	if err != nil {
		return nil, err
	}
	return io.NewSectionReader(r, ipcFileStart, end-ipcFileStart), nil
}

// ipcFooterStart is the offset of the footer of the IPC file r of size
// bytes.
func ipcFooterStart(r io.ReaderAt, size int64) (int64, error) {
	if size < ipcFileStart+ipcFileTrailer {
		return 0, fmt.Errorf("truncated Arrow IPC file (%d bytes)", size)
	}
	var b [4]byte
	if _, err := r.ReadAt(b[:], size-ipcFileTrailer); err != nil {
		return 0, err
	}
	footer := int64(int32(binary.LittleEndian.Uint32(b[:])))
	end := size - ipcFileTrailer - footer
	if footer <= 0 || end < ipcFileStart {
		return 0, fmt.Errorf("corrupt Arrow IPC file: footer length %d in a file of %d bytes", footer, size)
	}
	return end, nil
}

// bigEndian reports whether the footer's schema declares big-endian data
// (Schema.endianness, field 0: Little = 0, Big = 1).
func (f *ipcFooter) bigEndian() bool {
	if f.schema.b == nil {
		return false
	}
	e, ok := f.schema.scalar(0, 2)
	return ok && e == 1
}

// readIPCFooter reads and checks the footer of the IPC file r of size bytes:
// its schema's vectors lie in it, and every block lies between the start of
// the stream and the footer, without overlapping another.
func readIPCFooter(r io.ReaderAt, size int64) (*ipcFooter, error) {
	end, err := ipcFooterStart(r, size)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, size-ipcFileTrailer-end)
	if _, err := r.ReadAt(buf, end); err != nil {
		return nil, fmt.Errorf("reading the Arrow IPC file footer: %w", err)
	}
	corrupt := errors.New("corrupt Arrow IPC file: malformed footer")
	const footerSchema, footerDictionaries, footerRecordBatches = 1, 2, 3
	root, ok := fbRoot(buf)
	if !ok {
		return nil, corrupt
	}
	var schema fbTable
	if at, present, ok := root.ref(footerSchema); !ok {
		return nil, corrupt
	} else if present {
		budget := int64(len(buf)) / 4
		if err := checkSchema(fbTable{b: buf, pos: at}, &budget); err != nil {
			return nil, err
		}
		schema = fbTable{b: buf, pos: at}
	}
	ft := &ipcFooter{end: end, schema: schema}
	for _, list := range []struct {
		field int
		dict  bool
	}{{footerDictionaries, true}, {footerRecordBatches, false}} {
		start, n, ok := root.vector(list.field, blockSize)
		if !ok {
			return nil, corrupt
		}
		for k := int64(0); k < n; k++ {
			at := start + k*blockSize
			off, _ := root.uint(at, 8)
			meta, _ := root.uint(at+8, 4)
			body, _ := root.uint(at+16, 8)
			b := ipcBlock{offset: int64(off), meta: int64(int32(meta)), body: int64(body), dict: list.dict}
			if b.offset < ipcFileStart || b.meta < 8 || b.body < 0 || b.offset > end || b.meta > end-b.offset || b.body > end-b.offset-b.meta {
				kind := "record batch"
				if b.dict {
					kind = "dictionary batch"
				}
				return nil, fmt.Errorf("corrupt Arrow IPC file: %s %d at offset %d (metadata %d bytes, body %d bytes) is not within the %d bytes before the footer", kind, k, b.offset, b.meta, b.body, end)
			}
			ft.blocks = append(ft.blocks, b)
		}
	}
	// In file order: dictionaries (and their deltas) apply to the batches
	// after them, as in the stream.
	sort.SliceStable(ft.blocks, func(i, j int) bool { return ft.blocks[i].offset < ft.blocks[j].offset })
	for i := 1; i < len(ft.blocks); i++ {
		p, b := ft.blocks[i-1], ft.blocks[i]
		if b.offset < p.offset+p.meta+p.body {
			return nil, fmt.Errorf("corrupt Arrow IPC file: the blocks at offsets %d and %d overlap", p.offset, b.offset)
		}
	}
	return ft, nil
}

// ipcData is the bytes of an open IPC file: the file mapped into memory
// (mapped.go), or read block by block with positioned reads into reused
// buffers.
type ipcData struct {
	*mappedFile
	src  *sourceBytes
	f    io.ReaderAt // src
	size int64

	mu   sync.Mutex
	free [][]byte // reusable read buffers
	mem  memory.Allocator
}

// openIPCData opens the IPC file s (of s.Size bytes, as found when the
// inputs were expanded) and maps it when it is a file of the file system
// (mapSource).
func openIPCData(s Source, mem memory.Allocator) (*ipcData, error) {
	src, err := s.open()
	if err != nil {
		return nil, err
	}
	m, err := mapSource(src, s.Size)
	if err != nil {
		src.Close()
		return nil, err
	}
	return &ipcData{mappedFile: m, src: src, f: src, size: s.Size, mem: mem}, nil
}

// read returns bytes [off, off+n) of the file, which the caller checked to
// lie in it: a slice of the mapping, or a buffer read with ReadAt that done
// hands back for reuse.
func (d *ipcData) read(off, n int64) (b []byte, done func(), err error) {
	if d.mapped != nil {
		// (done reads d.mapped when called: nil once the file is unmapped.)
		return d.mapped[off : off+n : off+n], func() { releaseMapped(d.mapped, off, n) }, nil
	}
	var whole []byte // b's allocation
	d.mu.Lock()
	for i, f := range d.free {
		if int64(len(f)) >= n {
			whole = f
			d.free = append(d.free[:i], d.free[i+1:]...)
			break
		}
	}
	d.mu.Unlock()
	if whole == nil {
		// A little more than asked, so that the next batch, of about the
		// same size, reuses it.
		whole = d.mem.Allocate(int(n + n/8))
	}
	b = whole[:n:n]
	done = func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if len(d.free) < 4 {
			d.free = append(d.free, whole)
			return
		}
		d.mem.Free(whole)
	}
	if _, err := d.f.ReadAt(b, off); err != nil {
		done()
		if errors.Is(err, io.EOF) {
			err = errFileChanged
		}
		return nil, nil, err
	}
	return b, done, nil
}

// close unmaps and closes the file; nothing may use its bytes afterwards.
func (d *ipcData) close() error {
	err := d.unmap()
	d.mu.Lock()
	for _, b := range d.free {
		d.mem.Free(b)
	}
	d.free = nil
	d.mu.Unlock()
	return errors.Join(err, d.src.Close())
}

// ipcMessage is a block's message: its flatbuffer metadata and its body.
type ipcMessage struct {
	meta    []byte
	body    []byte
	kind    uint64 // headerRecordBatch or headerDictionaryBatch
	version uint64 // the MetadataVersion it is written in (metadataV5: 4)
	hdr     fbTable
	done    func() // hands the bytes back
}

// message reads and checks block b: the framing fits the block's metadata
// length, the metadata is a well-formed message of the block's kind whose
// buffers lie in its body, and the body fits the block. Metadata read from
// the mapping is copied: the decoders read it more than once.
func (d *ipcData) message(b ipcBlock) (*ipcMessage, error) {
	raw, done, err := d.read(b.offset, b.meta+b.body)
	if err != nil {
		return nil, err
	}
	m, err := parseIPCMessage(raw, b, d.mapped != nil)
	if err != nil {
		done()
		return nil, err
	}
	m.done = done
	return m, nil
}

func parseIPCMessage(raw []byte, b ipcBlock, copyMeta bool) (*ipcMessage, error) {
	where := fmt.Sprintf("corrupt Arrow IPC file: the message at offset %d", b.offset)
	framing := int64(4)
	n := int64(int32(binary.LittleEndian.Uint32(raw)))
	if uint32(n) == continuation {
		framing = 8
		n = int64(int32(binary.LittleEndian.Uint32(raw[4:])))
	}
	if n <= 0 || n > b.meta-framing {
		return nil, fmt.Errorf("%s: metadata of %d bytes in a block of %d", where, n, b.meta)
	}
	meta := raw[framing : framing+n]
	if copyMeta {
		meta = append([]byte(nil), meta...)
	}
	bodyLen, _, ok, err := checkMessage(meta, 1)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if !ok {
		return nil, fmt.Errorf("%s: malformed metadata", where)
	}
	if bodyLen > b.body {
		return nil, fmt.Errorf("%s: a body of %d bytes in a block of %d", where, bodyLen, b.body)
	}
	const msgVersion, msgHeaderType, msgHeader, dictData = 0, 1, 2, 1
	msg, _ := fbRoot(meta)
	version, _ := msg.scalar(msgVersion, 2)
	kind, _ := msg.scalar(msgHeaderType, 1)
	want := uint64(headerRecordBatch)
	if b.dict {
		want = headerDictionaryBatch
	}
	if kind != want {
		return nil, fmt.Errorf("%s: a message of type %d where the footer has a %s", where, kind, map[bool]string{true: "dictionary batch", false: "record batch"}[b.dict])
	}
	at, present, ok := msg.ref(msgHeader)
	if !ok || !present {
		return nil, fmt.Errorf("%s: no header", where)
	}
	return &ipcMessage{meta: meta, body: raw[b.meta : b.meta+bodyLen : b.meta+bodyLen], kind: kind, version: version, hdr: fbTable{b: meta, pos: at}}, nil
}
