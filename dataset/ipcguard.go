package dataset

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/budget"
)

// ipcGuard checks the framing of an Arrow IPC stream before the IPC reader
// sees it. The reader allocates a message's metadata and body at the sizes
// the stream declares, before reading them: a corrupt or hostile length
// (terabytes) would end the process, out of memory, where no recover reaches.
// The guard lets a message through only when its bytes are there: when the
// size of the stream is known (a file), a declared length larger than what
// is left is an error; when it is not (standard input), the message is read
// into a buffer that grows with the bytes that actually arrive before it is
// handed over. Whatever the guard cannot parse it passes on as it is, for the
// IPC reader to reject.
//
// The IPC reader also trusts the schema over a batch's metadata: it reads
// as many buffers as the schema's types have, past the end of a shorter
// buffer list, and allocates the garbage lengths it finds there. So the
// reader allocates through the guard's allocator, which refuses (panics, which
// the readers recover as an error) any allocation larger than the bytes of
// the stream read so far (and frees, when the reader is closed, the buffers
// of a batch the reader failed to decode half-way): without compression, no buffer, dictionary or
// concatenation of dictionary deltas is larger. Once a batch is compressed,
// an allocation may be larger than the stream, but not more than lz4 or zstd
// can make of its bytes (maxExpansion times): a buffer that claims more
// (a few hundred bytes claiming 64 GiB) is an error, not an allocation.
type ipcGuard struct {
	r        io.Reader
	left     int64 // bytes of r not read yet; -1: unknown
	buf      bytes.Buffer
	pending  []byte       // framing, metadata (and body, when buffered) to hand over
	body     int64        // body bytes to pass through from r
	messages int          // messages checked
	seen     atomic.Int64 // bytes read from r and checked bodies; -1 once a batch is compressed
	total    atomic.Int64 // bytes of the stream read or announced (bodies), compressed or not
	through  bool         // the end of the stream, or bytes the guard cannot parse: pass the rest as it is
	// charge is charged with what the guard buffers (its buffer's
	// capacity) and what the IPC reader allocates through its allocator;
	// nil: nothing is charged.
	charge   *budget.Charge
	buffered int64 // what of buf is charged
	// narrow are the decimal32 and decimal64 fields of the schema, which
	// the guard rewrote as fixed_size_binary for the reader (ipcdecimal.go).
	narrow []narrowField
}

// guardAllocator is the IPC reader's allocator: it refuses allocations
// larger than the bytes of the stream seen so far, and keeps what is
// outstanding, for free.
type guardAllocator struct {
	memory.Allocator
	g    *ipcGuard
	mu   sync.Mutex
	live map[*byte][]byte
}

// trackingAllocator returns mem keeping what is outstanding, for freeAll:
// a panic (a fault of a mapped file) may leave a buffer allocated half-way
// through a decoder.
func trackingAllocator(mem memory.Allocator) *guardAllocator {
	return &guardAllocator{Allocator: mem, live: map[*byte][]byte{}}
}

// allocator returns mem as the guard's allocator.
func (g *ipcGuard) allocator(mem memory.Allocator) *guardAllocator {
	return &guardAllocator{Allocator: mem, g: g, live: map[*byte][]byte{}}
}

func (a *guardAllocator) check(size int) {
	if size < 0 { // a length read from corrupt metadata: never handed on
		panic(fmt.Sprintf("corrupt Arrow IPC data: an allocation of %d bytes", size))
	}
	if a.g == nil { // only tracking
		return
	}
	seen := a.g.seen.Load()
	if seen >= 0 && int64(size) > seen {
		panic(fmt.Sprintf("corrupt Arrow IPC stream: an allocation of %d bytes after %d bytes of the stream", size, seen))
	}
	if seen < 0 { // compressed: no byte decompresses to more than maxExpansion
		if read := a.g.total.Load(); int64(size) > decompressedLimit(read) {
			panic(fmt.Sprintf("corrupt Arrow IPC stream: a compressed buffer declares %d bytes uncompressed after %d bytes of the stream (lz4 and zstd make at most %d of them)", size, read, decompressedLimit(read)))
		}
	}
}

func (a *guardAllocator) keep(b []byte) []byte {
	if cap(b) > 0 {
		a.mu.Lock()
		a.live[unsafe.SliceData(b[:1])] = b
		a.mu.Unlock()
	}
	return b
}

func (a *guardAllocator) forget(b []byte) {
	if cap(b) > 0 {
		a.mu.Lock()
		delete(a.live, unsafe.SliceData(b[:1]))
		a.mu.Unlock()
	}
}

// grow charges size bytes more to the guard's budget; the readers recover
// the panic of a refusal as its error.
func (a *guardAllocator) grow(size int) {
	if a.g == nil {
		return
	}
	if err := a.g.charge.Grow("an Arrow IPC buffer", int64(size)); err != nil {
		panic(err)
	}
}

// give gives n bytes back to the guard's budget.
func (a *guardAllocator) give(n int) {
	if a.g != nil {
		a.g.charge.Give(int64(n))
	}
}

// Allocate implements memory.Allocator.
func (a *guardAllocator) Allocate(size int) []byte {
	a.check(size)
	a.grow(size)
	return a.keep(a.Allocator.Allocate(size))
}

// Reallocate implements memory.Allocator.
func (a *guardAllocator) Reallocate(size int, b []byte) []byte {
	a.check(size)
	a.grow(size - len(b))
	a.forget(b)
	return a.keep(a.Allocator.Reallocate(size, b))
}

// Free implements memory.Allocator.
func (a *guardAllocator) Free(b []byte) {
	a.forget(b)
	a.give(len(b))
	a.Allocator.Free(b)
}

// freeAll frees what is still outstanding once the IPC reader is released
// and every record it returned too: what the reader lost track of when
// corrupt input made it fail half-way through a batch.
func (a *guardAllocator) freeAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for p, b := range a.live {
		delete(a.live, p)
		a.give(len(b))
		a.Allocator.Free(b)
	}
}

// newIPCGuard guards the stream r of size bytes (-1: unknown).
func newIPCGuard(r io.Reader, size int64) *ipcGuard {
	return &ipcGuard{r: r, left: size}
}

func (g *ipcGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 && g.body == 0 && !g.through {
		if err := g.nextMessage(); err != nil {
			return 0, err
		}
	}
	switch {
	case len(p) == 0:
		return 0, nil
	case len(g.pending) > 0:
		n := copy(p, g.pending)
		g.pending = g.pending[n:]
		return n, nil
	case g.body > 0:
		// The body was counted as seen when its length was checked.
		p = p[:min(int64(len(p)), g.body)]
		n, err := g.r.Read(p)
		g.left -= int64(n)
		g.body -= int64(n)
		if errors.Is(err, io.EOF) && g.body > 0 {
			err = io.ErrUnexpectedEOF
		}
		return n, err
	}
	return g.read(p)
}

func (g *ipcGuard) read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	g.total.Add(int64(n))
	if seen := g.seen.Load(); seen >= 0 {
		g.seen.Store(seen + int64(n))
	}
	if g.left >= 0 {
		g.left -= int64(n)
	}
	return n, err
}

// fill appends n bytes of r to the buffer, as they arrive; it reports
// whether all n were there.
func (g *ipcGuard) fill(n int64) (bool, error) {
	got, err := g.buf.ReadFrom(io.LimitReader(readerFunc(g.read), n))
	if err != nil {
		return false, err
	}
	return got == n, nil
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// nextMessage reads the framing and metadata of the next message and checks
// its declared lengths.
func (g *ipcGuard) nextMessage() error {
	g.buf.Reset()
	// passOn hands over what was read and lets the rest through.
	passOn := func() error {
		g.pending, g.through = g.buf.Bytes(), true
		return nil
	}
	if ok, err := g.fill(4); err != nil || !ok {
		if err == nil && g.buf.Len() == 0 {
			return io.EOF
		}
		return errors.Join(err, passOn())
	}
	if g.messages == 0 {
		// Other formats' first bytes: say what the input is.
		switch head := g.buf.Bytes()[:4]; {
		case bytes.Equal(head, []byte("PAR1")):
			return &otherFormatError{"this looks like a Parquet file (it starts with PAR1): pass it as a path; Parquet is read from its footer, at the end, and standard input takes an Arrow IPC stream"}
		case bytes.Equal(head, []byte("ARRO")):
			return &otherFormatError{"this looks like an Arrow IPC file (it starts with ARROW1): pass it as a path; standard input takes an Arrow IPC stream"}
		}
	}
	msgLen := int64(int32(binary.LittleEndian.Uint32(g.buf.Bytes())))
	if uint32(msgLen) == continuation {
		if ok, err := g.fill(4); err != nil || !ok {
			return errors.Join(err, passOn())
		}
		msgLen = int64(int32(binary.LittleEndian.Uint32(g.buf.Bytes()[4:])))
	}
	if msgLen <= 0 { // the end of the stream, or a length the reader rejects
		return passOn()
	}
	if g.left >= 0 && msgLen > g.left {
		return fmt.Errorf("truncated Arrow IPC stream: message metadata of %d bytes where %d are left: %w", msgLen, g.left, io.ErrUnexpectedEOF)
	}
	framing := g.buf.Len()
	if err := g.reserve(int64(framing) + msgLen); err != nil {
		return err
	}
	if ok, err := g.fill(msgLen); err != nil || !ok {
		if err != nil {
			return err
		}
		return fmt.Errorf("truncated Arrow IPC stream: message metadata of %d bytes, the stream ends after %d: %w", msgLen, g.buf.Len()-framing, io.ErrUnexpectedEOF)
	}
	bodyLen, compressed, ok, err := checkMessage(g.buf.Bytes()[framing:], g.messages)
	if compressed {
		g.seen.Store(-1)
	}
	g.messages++
	if err == nil && ok && g.messages == 1 {
		// The schema: decimal32 and decimal64 fields rewritten for the
		// reader (ipcdecimal.go).
		if g.narrow, err = narrowSchemaMessage(g.buf.Bytes()[framing:]); err != nil {
			return err
		}
	}
	switch {
	case err != nil:
		return err
	case !ok:
		// The IPC reader does not check the bounds of what it reads
		// either: it would allocate at lengths read from anywhere.
		return fmt.Errorf("corrupt Arrow IPC stream: message %d: malformed metadata", g.messages-1)
	case g.left >= 0:
		if bodyLen > g.left {
			return fmt.Errorf("truncated Arrow IPC stream: message body of %d bytes where %d are left: %w", bodyLen, g.left, io.ErrUnexpectedEOF)
		}
		g.body = bodyLen
		g.total.Add(bodyLen) // read before the reader decompresses it
		if seen := g.seen.Load(); seen >= 0 {
			g.seen.Store(seen + bodyLen)
		}
	default:
		start := g.buf.Len()
		if err := g.reserve(int64(start) + bodyLen); err != nil {
			return err
		}
		if ok, err := g.fill(bodyLen); err != nil || !ok {
			if err != nil {
				return err
			}
			return fmt.Errorf("truncated Arrow IPC stream: message body of %d bytes, the stream ends after %d: %w", bodyLen, g.buf.Len()-start, io.ErrUnexpectedEOF)
		}
	}
	g.pending = g.buf.Bytes()
	return nil
}

// otherFormatError is the error of a stream that starts as another format
// does: it says what to do instead.
type otherFormatError struct{ msg string }

func (e *otherFormatError) Error() string { return e.msg }

// reserve charges the guard's buffer with room for n bytes (a message
// whose lengths it read), before it reads them.
func (g *ipcGuard) reserve(n int64) error {
	if n <= g.buffered {
		return nil
	}
	if err := g.charge.Grow("an Arrow IPC message buffered", n-g.buffered); err != nil {
		return err
	}
	g.buffered = n
	return nil
}

// A flatbuffer table of an IPC message's metadata, read with bounds checks:
// the metadata is corrupt input.
type fbTable struct {
	b   []byte
	pos int64
}

func (t fbTable) uint(at, n int64) (uint64, bool) {
	if at < 0 || at+n > int64(len(t.b)) {
		return 0, false
	}
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(t.b[at+i])
	}
	return v, true
}

// fbRoot is the root table of the flatbuffer b.
func fbRoot(b []byte) (fbTable, bool) {
	t := fbTable{b: b}
	pos, ok := t.uint(0, 4)
	t.pos = int64(pos)
	return t, ok
}

// field is where field i of t is; 0 when absent.
func (t fbTable) field(i int) (int64, bool) {
	soff, ok := t.uint(t.pos, 4)
	if !ok {
		return 0, false
	}
	vt := t.pos - int64(int32(soff))
	vsize, ok := t.uint(vt, 2)
	if !ok {
		return 0, false
	}
	// A field is present as flatbuffers reads it (Table.Offset): when its
	// slot starts inside the vtable, even if an odd size cuts it.
	slot := int64(4 + 2*i)
	if slot >= int64(vsize) {
		return 0, true
	}
	off, ok := t.uint(vt+slot, 2)
	if !ok || off == 0 {
		return 0, ok
	}
	return t.pos + int64(off), true
}

// scalar is field i of t, an integer of n bytes (0 when absent).
func (t fbTable) scalar(i int, n int64) (uint64, bool) {
	at, ok := t.field(i)
	if !ok || at == 0 {
		return 0, ok
	}
	return t.uint(at, n)
}

// ref is what field i of t refers to (a table or a vector); present tells
// whether the field is there.
func (t fbTable) ref(i int) (to int64, present, ok bool) {
	at, ok := t.field(i)
	if !ok || at == 0 {
		return 0, false, ok
	}
	off, ok := t.uint(at, 4)
	return at + int64(off), true, ok
}

// IPC message header types (the MessageHeader union of Message.fbs).
const (
	headerSchema          = 1
	headerDictionaryBatch = 2
	headerRecordBatch     = 3
)

// checkMessage reads the body length of the IPC message index (from 0) whose
// metadata is meta, and checks that it is a schema message if and only if it
// is the first, a record or dictionary batch otherwise, and that the buffers
// of a batch lie in the body. ok is false when meta is not a well-formed
// flatbuffer where it was read.
func checkMessage(meta []byte, index int) (bodyLen int64, compressed, ok bool, err error) {
	first := index == 0
	msg, ok := fbRoot(meta)
	if !ok {
		return 0, compressed, false, nil
	}
	const (
		msgHeaderType, msgHeader, msgBodyLength = 1, 2, 3
		dictData                                = 1
		batchBuffers, batchCompression          = 2, 3
	)
	n, ok := msg.scalar(msgBodyLength, 8)
	if !ok {
		return 0, compressed, false, nil
	}
	bodyLen = int64(n)
	if bodyLen < 0 {
		return 0, compressed, true, fmt.Errorf("corrupt Arrow IPC stream: message body of %d bytes", bodyLen)
	}
	kind, ok := msg.scalar(msgHeaderType, 1)
	switch {
	case !ok:
		return bodyLen, compressed, false, nil
	case kind == headerSchema && first:
		at, present, ok := msg.ref(msgHeader)
		if !ok || !present {
			return bodyLen, compressed, ok, nil
		}
		budget := int64(len(meta)) / 4
		return bodyLen, compressed, true, checkSchema(fbTable{b: meta, pos: at}, &budget)
	case kind == headerSchema:
		return 0, compressed, true, errors.New("corrupt Arrow IPC stream: a second schema message")
	case !first && (kind == headerRecordBatch || kind == headerDictionaryBatch):
	default:
		// The IPC reader takes what it does not expect for what it
		// expects (anything for a dictionary batch at the start).
		return 0, compressed, true, fmt.Errorf("corrupt Arrow IPC stream: message %d of type %d", index, kind)
	}
	at, present, ok := msg.ref(msgHeader)
	if !ok || !present {
		return bodyLen, compressed, ok, nil
	}
	batch := fbTable{b: meta, pos: at}
	if kind == headerDictionaryBatch {
		if at, present, ok = batch.ref(dictData); !ok || !present {
			return bodyLen, compressed, ok, nil
		}
		batch.pos = at
	}
	_, compressed, ok = batch.ref(batchCompression)
	if !ok {
		return bodyLen, compressed, false, nil
	}
	vec, present, ok := batch.ref(batchBuffers)
	if !ok || !present {
		return bodyLen, compressed, ok, nil
	}
	count, ok := batch.uint(vec, 4)
	if !ok || int64(count) > (int64(len(meta))-vec-4)/16 {
		return bodyLen, compressed, false, nil
	}
	for i := int64(0); i < int64(count); i++ {
		off, _ := batch.uint(vec+4+16*i, 8)
		size, _ := batch.uint(vec+4+16*i+8, 8)
		if int64(off) < 0 || int64(size) < 0 || int64(size) > bodyLen-int64(off) {
			return bodyLen, compressed, true, fmt.Errorf("corrupt Arrow IPC stream: buffer %d at %d of %d bytes in a message body of %d", i, int64(off), int64(size), bodyLen)
		}
	}
	return bodyLen, compressed, true, nil
}

// vector is where the elements of vector field i of t start, and how many of
// elem bytes there are (0 when absent), checked to lie in the buffer.
func (t fbTable) vector(i int, elem int64) (start, n int64, ok bool) {
	at, present, ok := t.ref(i)
	if !ok || !present {
		return 0, 0, ok
	}
	l, ok := t.uint(at, 4)
	if !ok || int64(l) > (int64(len(t.b))-at-4)/elem {
		return 0, 0, false
	}
	return at + 4, int64(l), true
}

// elem is table k of the vector of tables starting at start.
func (t fbTable) elem(start, k int64) (fbTable, bool) {
	off, ok := t.uint(start+4*k, 4)
	return fbTable{b: t.b, pos: start + 4*k + int64(off)}, ok
}

// maxNesting bounds the depth of nested fields of a schema.
const maxNesting = 64

var errCorruptSchema = errors.New("corrupt Arrow IPC stream: corrupt schema message")

// checkSchema checks that the vectors of the Schema table t, and of its
// fields at any depth, lie in the buffer: the IPC reader allocates their
// declared lengths before reading them. budget bounds the fields visited
// (the children of a field may be shared, or a cycle).
func checkSchema(t fbTable, budget *int64) error {
	const schemaFields, schemaMetadata, schemaFeatures = 1, 2, 3
	start, n, ok := t.vector(schemaFields, 4)
	if !ok {
		return errCorruptSchema
	}
	for k := int64(0); k < n; k++ {
		f, ok := t.elem(start, k)
		if !ok {
			return errCorruptSchema
		}
		if err := checkField(f, 0, budget); err != nil {
			return err
		}
	}
	if _, _, ok := t.vector(schemaMetadata, 4); !ok {
		return errCorruptSchema
	}
	if _, _, ok := t.vector(schemaFeatures, 8); !ok {
		return errCorruptSchema
	}
	return nil
}

// checkField checks a Field table at depth (from 0) of a schema.
func checkField(f fbTable, depth int, budget *int64) error {
	const (
		fieldTypeType, fieldType, fieldChildren, fieldMetadata = 2, 3, 5, 6
		typeUnion                                              = 14 // the Type union's Union
		unionTypeIDs                                           = 1
	)
	if *budget--; *budget < 0 {
		return errCorruptSchema
	}
	if depth > maxNesting {
		return fmt.Errorf("corrupt Arrow IPC stream: fields nested more than %d deep", maxNesting)
	}
	if _, _, ok := f.vector(fieldMetadata, 4); !ok {
		return errCorruptSchema
	}
	if kind, ok := f.scalar(fieldTypeType, 1); !ok {
		return errCorruptSchema
	} else if kind == typeUnion {
		at, present, ok := f.ref(fieldType)
		if !ok {
			return errCorruptSchema
		}
		if present {
			if _, _, ok := (fbTable{b: f.b, pos: at}).vector(unionTypeIDs, 4); !ok {
				return errCorruptSchema
			}
		}
	}
	start, n, ok := f.vector(fieldChildren, 4)
	if !ok {
		return errCorruptSchema
	}
	for k := int64(0); k < n; k++ {
		c, ok := f.elem(start, k)
		if !ok {
			return errCorruptSchema
		}
		if err := checkField(c, depth+1, budget); err != nil {
			return err
		}
	}
	return nil
}
