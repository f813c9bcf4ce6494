package dataset

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Format is the container format of an input.
type Format uint8

// The formats.
const (
	Unknown Format = iota
	Parquet
	IPCFile   // Arrow IPC file format ("Feather v2")
	IPCStream // Arrow IPC streaming format
)

func (f Format) String() string {
	switch f {
	case Parquet:
		return "parquet"
	case IPCFile:
		return "arrow-file"
	case IPCStream:
		return "arrow-stream"
	}
	return "unknown"
}

var (
	// ErrUnknownFormat is wrapped by errors for inputs that are none of the
	// supported formats.
	ErrUnknownFormat = errors.New("not a Parquet file, Arrow IPC file or Arrow IPC stream")
	// ErrEmpty is wrapped by errors for inputs of zero bytes.
	ErrEmpty = errors.New("empty file")
)

var (
	parquetMagic     = []byte("PAR1")
	parquetEncrypted = []byte("PARE")
	arrowMagic       = []byte("ARROW1")
)

const (
	continuation = 0xFFFFFFFF
	// maxSchemaMessage bounds the length prefix accepted as the start of a
	// stream when detecting; a schema message is at most a few MiB.
	maxSchemaMessage = 1 << 28
	// detectLen is how many bytes of each end of a file Detect needs.
	detectLen = 8
)

// Detect reports the format of data of size bytes (-1 when unknown) from its
// first bytes (head) and last bytes (tail); 8 of each are enough. An input
// that starts like a format but cannot be one (a Parquet file without its
// closing magic) is an error saying so; one that matches nothing wraps
// ErrUnknownFormat. An IPC stream is recognized from its first message
// prefix only: DetectFile confirms it by reading the schema.
func Detect(head, tail []byte, size int64) (Format, error) {
	if size == 0 || len(head) == 0 {
		return Unknown, ErrEmpty
	}
	switch {
	case bytes.HasPrefix(head, parquetMagic):
		switch {
		case size >= 0 && size < 12:
			return Unknown, fmt.Errorf("truncated Parquet file (%d bytes)", size)
		case bytes.HasSuffix(tail, parquetMagic):
			return Parquet, nil
		case bytes.HasSuffix(tail, parquetEncrypted):
			return Unknown, errors.New("corrupt Parquet file: PAR1 at the start, PARE (an encrypted footer) at the end")
		}
		return Unknown, errors.New("truncated or corrupt Parquet file: no PAR1 magic at the end")
	case bytes.HasPrefix(head, parquetEncrypted): // (encrypted footer mode)
		switch {
		case size >= 0 && size < 12:
			return Unknown, fmt.Errorf("truncated Parquet file (%d bytes)", size)
		case bytes.HasSuffix(tail, parquetEncrypted):
			return Parquet, nil
		}
		return Unknown, errors.New("truncated or corrupt encrypted Parquet file: no PARE magic at the end")
	case bytes.HasPrefix(head, arrowMagic):
		// magic, padding, at least one stream message, footer, footer length, magic
		if (size < 0 || size >= int64(2*len(arrowMagic)+2+4)) && bytes.HasSuffix(tail, arrowMagic) {
			return IPCFile, nil
		}
		return Unknown, errors.New("truncated or corrupt Arrow IPC file: no ARROW1 magic at the end")
	}
	if len(head) < 8 {
		return Unknown, ErrUnknownFormat
	}
	first := binary.LittleEndian.Uint32(head)
	if first == continuation {
		n := int64(int32(binary.LittleEndian.Uint32(head[4:])))
		switch {
		case n == 0:
			return Unknown, errors.New("Arrow IPC stream without a schema (it ends at once)")
		case n < 0 || n > maxSchemaMessage:
			return Unknown, fmt.Errorf("corrupt Arrow IPC stream: message length %d", n)
		case size >= 0 && 8+n > size:
			return Unknown, fmt.Errorf("truncated Arrow IPC stream: the first message needs %d bytes, the file has %d", 8+n, size)
		}
		return IPCStream, nil
	}
	// Pre-1.0 streams: a bare int32 length, then the flatbuffer, whose first
	// word is the offset of its root table (inside the message), the length
	// and the message padded to 8 bytes (Arrow 0.14 wrote 4+n a multiple of
	// 8; n a multiple of 8 is accepted too). The schema's decoding confirms
	// it (DetectFile).
	n := int64(int32(first))
	root := int64(binary.LittleEndian.Uint32(head[4:]))
	if n >= 8 && n <= maxSchemaMessage && (n%8 == 0 || (n+4)%8 == 0) && (size < 0 || 4+n <= size) && root >= 4 && root < n {
		return IPCStream, nil
	}
	return Unknown, ErrUnknownFormat
}

// DetectFile reports the format of the size bytes of r. A stream candidate is
// confirmed by decoding its schema message.
func DetectFile(r io.ReaderAt, size int64) (Format, error) {
	if size == 0 {
		return Unknown, ErrEmpty
	}
	head := make([]byte, min(size, detectLen))
	if _, err := r.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return Unknown, err
	}
	tail := make([]byte, min(size, detectLen))
	if _, err := r.ReadAt(tail, size-int64(len(tail))); err != nil && !errors.Is(err, io.EOF) {
		return Unknown, err
	}
	f, err := Detect(head, tail, size)
	if err != nil || f != IPCStream {
		return f, err
	}
	if err := checkStreamSchema(io.NewSectionReader(r, 0, size)); err != nil {
		if binary.LittleEndian.Uint32(head) != continuation {
			// a weak (legacy) signal: most likely some other kind of file
			return Unknown, ErrUnknownFormat
		}
		return Unknown, fmt.Errorf("corrupt Arrow IPC stream: %w", err)
	}
	return IPCStream, nil
}

// checkStreamSchema decodes the schema message at the start of r.
func checkStreamSchema(r *io.SectionReader) (err error) {
	defer recoverTo(&err)
	guard := newIPCGuard(r, r.Size())
	mem := guard.allocator(memory.DefaultAllocator)
	defer mem.freeAll()
	rdr, err := newIPCReader(guard, mem)
	if err != nil {
		return err
	}
	rdr.Release()
	return nil
}

// recoverTo turns a panic of a decoder fed with corrupt bytes into an error:
// the last line of defence, deferred at the entry of every read.
func recoverTo(err *error) {
	if p := recover(); p != nil {
		*err = panicError(p)
	}
}
