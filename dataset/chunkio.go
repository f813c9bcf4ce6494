package dataset

import (
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/parquet/metadata"
)

// What the page path's workers read column chunks with: arrow-go's page
// reader (page headers, decompression), fed by a stream and an allocator of
// the worker's own that are reused chunk after chunk, so that reading a page
// neither allocates nor zeroes a buffer, and page bodies go from the file
// straight into the reader's decompression buffer.

// streamBuffer is the size of a chunkStream's buffer: page headers are read
// through it (it grows for a larger header), page bodies around it.
const streamBuffer = 64 << 10

// chunkStream is a parquet.BufferedReader over bytes [pos, end) of a file.
type chunkStream struct {
	f        io.ReaderAt
	pos, end int64 // the file's next byte to read; the end of the chunk
	buf      []byte
	r, w     int // buffered: buf[r:w]
}

// reset starts reading n bytes of f at off.
func (s *chunkStream) reset(f io.ReaderAt, off, n int64) {
	if len(s.buf) != streamBuffer { // new, or grown for a large header
		s.buf = make([]byte, streamBuffer)
	}
	s.f, s.pos, s.end, s.r, s.w = f, off, off+n, 0, 0
}

// readAt reads len(p) bytes of the chunk at s.pos.
func (s *chunkStream) readAt(p []byte) error {
	n, err := s.f.ReadAt(p, s.pos)
	s.pos += int64(n)
	if n == len(p) {
		return nil
	}
	if errors.Is(err, io.EOF) || err == nil {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// fill buffers at least want bytes, or up to the end of the chunk.
func (s *chunkStream) fill(want int) error {
	if s.w-s.r >= want || s.pos >= s.end {
		return nil
	}
	s.w = copy(s.buf, s.buf[s.r:s.w])
	s.r = 0
	if want = int(min(int64(want), int64(s.w)+s.end-s.pos)); want > len(s.buf) {
		buf := make([]byte, want)
		copy(buf, s.buf[:s.w])
		s.buf = buf
	}
	n := int(min(int64(len(s.buf)-s.w), s.end-s.pos))
	err := s.readAt(s.buf[s.w : s.w+n])
	if err == nil {
		s.w += n
	}
	return err
}

// Peek returns the next n bytes without moving past them, fewer (with
// io.EOF) at the end of the chunk.
func (s *chunkStream) Peek(n int) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("peeking %d bytes", n)
	}
	if err := s.fill(n); err != nil {
		return nil, err
	}
	if s.w-s.r < n {
		return s.buf[s.r:s.w], io.EOF
	}
	return s.buf[s.r : s.r+n], nil
}

// Discard moves past the next n bytes.
func (s *chunkStream) Discard(n int) (int, error) {
	if n < 0 {
		return 0, fmt.Errorf("discarding %d bytes", n)
	}
	buffered := s.w - s.r
	if n <= buffered {
		s.r += n
		return n, nil
	}
	s.r = s.w
	rest := int64(n - buffered)
	if rest > s.end-s.pos {
		done := buffered + int(s.end-s.pos)
		s.pos = s.end
		return done, io.ErrUnexpectedEOF
	}
	s.pos += rest
	return n, nil
}

// Read reads buffered bytes, or else reads the file straight into p.
func (s *chunkStream) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if s.r < s.w {
		n := copy(p, s.buf[s.r:s.w])
		s.r += n
		return n, nil
	}
	if s.pos >= s.end {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), s.end-s.pos))
	if err := s.readAt(p[:n]); err != nil {
		return 0, err
	}
	return n, nil
}

// chunkRange returns where column chunk cc lies in a file of size bytes, as
// arrow-go's row group reader computes it (the dictionary page first, and
// the padding that makes up for PARQUET-816 in files of old writers), and
// checks that it lies inside the file.
func chunkRange(md *metadata.FileMetaData, cc *metadata.ColumnChunkMetaData, size int64) (off, n int64, err error) {
	off, n = cc.DataPageOffset(), cc.TotalCompressedSize()
	if d := cc.DictionaryPageOffset(); cc.HasDictionaryPage() && d > 0 && d < off {
		off = d
	}
	if off < 0 || n < 0 || off > size || n > size-off {
		return 0, 0, fmt.Errorf("the column chunk's %d bytes at offset %d are not inside the file of %d bytes", n, off, size)
	}
	if md.WriterVersion().LessThan(metadata.Parquet816FixedVersion) {
		n += min(100, size-(off+n))
	}
	return off, n, nil
}

// pageBuffers is the allocator of a worker's page reader. The reader frees
// the buffer of each page when it moves to the next one (that of a V1 data
// page or a dictionary page already when Next returns it, while the page
// still uses it: arrow-go's own allocator never reuses memory), and
// allocates the next page's buffer in the next call to Next: by then the
// worker is done with the page, so handing the freed buffers back, without
// zeroing them, is safe. The worker copies the values of a dictionary page
// out before it reads on.
//
// limit, when set, is the largest buffer the reader may ask for: the pages
// of the chunk were checked (pqguard.go), and a larger request is a bug or
// corrupt bytes the check missed, refused (with a panic that the worker
// recovers) rather than allocated.
type pageBuffers struct {
	free  [][]byte
	limit int64
}

// maxFreeBuffers bounds the buffers kept (the reader holds one at a time).
const maxFreeBuffers = 2

// Allocate implements memory.Allocator.
func (a *pageBuffers) Allocate(n int) []byte {
	// (arrow-go rounds buffers up to a multiple of 64 bytes)
	if a.limit > 0 && int64(n) > a.limit+64 {
		panic(fmt.Errorf("a page buffer of %d bytes, where the largest page has %d", n, a.limit))
	}
	for i, b := range a.free {
		if cap(b) >= n {
			a.free = append(a.free[:i], a.free[i+1:]...)
			return b[:n]
		}
	}
	return make([]byte, n)
}

// Reallocate implements memory.Allocator.
func (a *pageBuffers) Reallocate(n int, b []byte) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	nb := a.Allocate(n)
	copy(nb, b)
	a.Free(b)
	return nb
}

// Free implements memory.Allocator.
func (a *pageBuffers) Free(b []byte) {
	if cap(b) == 0 {
		return
	}
	if len(a.free) < maxFreeBuffers {
		a.free = append(a.free, b[:cap(b)])
		return
	}
	small := 0 // keep the larger buffers
	for i := range a.free {
		if cap(a.free[i]) < cap(a.free[small]) {
			small = i
		}
	}
	if cap(a.free[small]) < cap(b) {
		a.free[small] = b[:cap(b)]
	}
}
