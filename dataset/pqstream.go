package dataset

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/andybalholm/brotli"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/arrowagg/arrowagg/budget"
)

// Large pages are decompressed as streams, a piece at a time, checking the
// context between pieces: a cancel is answered within a piece (milliseconds)
// rather than after a whole page (a page may hold 1 GiB, maxPageBytes). The
// page path reads a large PLAIN data page from its stream a window at a
// time (pageStream), its compressed bytes a buffer at a time from the file:
// a worker holds the window, the page's levels and the decoder's state
// (a zstd window, a buffer of input), whatever the page's size. The other
// large pages (dictionaries, dictionary indices, and those the walk checks
// for arrow-go's decoders) are decompressed whole, but a piece at a time
// too (decodeInPieces).
//
// A stream gives the bytes and the errors of the one-shot decode
// (decodePage) of the same page: a page that decompresses to another size
// than it declares is an error, as is a decoder's error or panic on corrupt
// bytes ("corrupt <codec> page (...)"). Each reader is driven as arrow-go's
// codec (or the worker's zstd decoder) drives it on the whole page: the
// gzip reader up to the declared size, the brotli reader until it stops
// giving bytes, the zstd decoder to the end of its frames, or to a byte
// past the declared size (DecodeAll decodes them all, into the page's
// buffer: a byte past it is an error).
//
// Snappy and LZ4 (Hadoop framing, LZ4_RAW) have no streaming form in
// arrow-go's codecs: their pages decompress in one call, as before (snappy
// decodes a GiB in a fraction of a second).

// streamPageBytes is the size above which a page is decompressed as a
// stream. Pages of writers are about 1 MiB: they keep the one-shot decode,
// which writes straight into the page's buffer. A variable for the tests.
var streamPageBytes int64 = 8 << 20

// pieceBytes is the most bytes a stream decompresses between two checks of
// the context. A variable for the tests.
var pieceBytes = 4 << 20

// streamInputBytes is the buffer of compressed bytes a stream reads from the
// file at a time.
const streamInputBytes = 1 << 20

// zstdStreamWindow is the largest window (the history a stream decoder
// holds) of the zstd frames of a page decompressed as a stream. Writers use
// windows of a few MiB (arrow-go's encoder 8 MiB); a frame marked single
// segment has the window of its whole content, which klauspost/compress's
// stream decoder refuses past 512 MiB where DecodeAll decodes it. Pages of
// larger windows keep the one-shot decode, which holds no window.
const zstdStreamWindow = 64 << 20

// streamedCodec says whether a page of unc bytes compressed with codec is
// decompressed as a stream, its zstd frames needing a window of zstdWindow
// bytes at most (checkZstd).
func streamedCodec(codec compress.Compression, unc, zstdWindow int64) bool {
	if unc <= streamPageBytes {
		return false
	}
	switch codec {
	case compress.Codecs.Gzip, compress.Codecs.Brotli:
		return true
	case compress.Codecs.Zstd:
		return zstdWindow <= zstdStreamWindow
	}
	return false
}

// streamedPlain says whether page p of the page path, a PLAIN data page of a
// chunk compressed with codec, is read as a stream: a large page that is
// not compressed, or whose codec has a stream.
func streamedPlain(codec compress.Compression, p *chunkPage, zstdWindow int64) bool {
	unc := int64(p.uncompressed)
	if p.typ == pageTypeDict || parquet.Encoding(p.encoding) != parquet.Encodings.Plain || unc <= streamPageBytes {
		return false
	}
	if codec == compress.Codecs.Uncompressed || (p.typ == pageTypeDataV2 && !p.isCompressed) {
		return true
	}
	return streamedCodec(codec, unc, zstdWindow)
}

// pageInput reads the bytes [off, end) of a file, the compressed bytes of a
// page. It keeps its first read error: decoders report the errors of their
// input as corrupt input, or as their own.
type pageInput struct {
	f        io.ReaderAt
	off, end int64
	err      error
}

func (in *pageInput) Read(p []byte) (int, error) {
	if in.err != nil {
		return 0, in.err
	}
	if in.off >= in.end {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), in.end-in.off)]
	if err := readFull(in.f, p, in.off); err != nil {
		in.err = err
		return 0, err
	}
	in.off += int64(len(p))
	return len(p), nil
}

// streamDecoders are a worker's stream decoders and buffers, made on first
// use, shared by the walk and the page path (one page at a time), and
// released at the end of a chunk that used them. The zstd decoder's history
// is charged to the chunk's charge (its buffers are no larger than
// keepBytes: uncharged, as the walk's small buffers).
type streamDecoders struct {
	// zstd decodes streams in the calling goroutine: with a concurrency of
	// 1, klauspost/compress's decoder decodes a stream synchronously (it
	// starts no goroutine). It is not the worker's DecodeAll decoder: a
	// stream holds its decoder's one block decoder until Reset, which a
	// DecodeAll on the same decoder would wait for. Its history is twice
	// the window, moved down once a window's bytes came out (in its low
	// memory mode, a window and 1 MiB, the window moved down every MiB:
	// twice as slow with windows of 8 MiB).
	zstd    *zstd.Decoder
	gzip    *gzip.Reader
	in      pageInput
	buf     *bufio.Reader // over in
	scratch []byte        // bytes read past (skipped, or past the page)
	whole   pageStream    // the stream of a page decompressed whole
	used    bool          // since the last release
	charge  *budget.Charge
	charged int64 // the zstd history charged to charge
}

// input returns a reader of the n bytes at off of the file of chunk c,
// buffered.
func (d *streamDecoders) input(c *guardChunk, off, n int64) io.Reader {
	d.in = pageInput{f: c.f, off: off, end: off + n}
	d.charge = c.charge
	if d.buf == nil {
		d.buf = bufio.NewReaderSize(&d.in, streamInputBytes)
	} else {
		d.buf.Reset(&d.in)
	}
	d.used = true
	return d.buf
}

// release drops the decoders and buffers (a zstd decoder holds a window of
// up to zstdStreamWindow) once a chunk used them.
func (d *streamDecoders) release() {
	if !d.used {
		return
	}
	if d.zstd != nil {
		d.zstd.Close()
	}
	d.charge.Shrink(d.charged)
	*d = streamDecoders{}
}

// pageStream is the decompressed bytes of a page, read in order.
type pageStream struct {
	name compress.Compression // Uncompressed: the bytes are read as they are
	r    io.Reader
	in   *pageInput // the file, when the compressed bytes come from it
	dec  *streamDecoders
	// levels is the bytes of levels in front of the compressed bytes
	// (a data page v2): the sizes of errors count them.
	levels int64
	unc    int64 // the bytes the page declares after its levels
	done   int64 // the bytes read so far, after the levels
	err    error // the stream's error: once one, always one
}

// open starts st on the decompressed bytes of src, compressed with name
// (Uncompressed: src is the bytes), which a page declares as unc bytes
// after levels bytes of levels, its zstd frames needing a window of window
// bytes at most. src is the reader of input when it reads the file.
func (d *streamDecoders) open(st *pageStream, name compress.Compression, src io.Reader, levels, unc, window int64) error {
	d.used = true
	*st = pageStream{name: name, dec: d, levels: levels, unc: unc}
	if src == d.buf {
		st.in = &d.in
	}
	switch name {
	case compress.Codecs.Uncompressed:
		st.r = src
	case compress.Codecs.Zstd:
		if h := 2 * window; h > keepBytes && h > d.charged { // (its history, made for the first frame)
			if err := d.charge.Grow("a zstd window", h-d.charged); err != nil {
				return err
			}
			d.charged = h
		}
		if d.zstd == nil {
			z, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(false))
			if err != nil {
				return err
			}
			d.zstd = z
		}
		if err := d.zstd.Reset(src); err != nil {
			return st.fail(err)
		}
		st.r = d.zstd
	case compress.Codecs.Gzip:
		if d.gzip == nil {
			d.gzip = new(gzip.Reader)
		}
		if err := d.gzip.Reset(src); err != nil { // (it reads the header)
			return st.fail(err)
		}
		st.r = d.gzip
	case compress.Codecs.Brotli:
		// A new reader: Reset keeps the input a reader buffered and did not
		// decode (bytes after the end of its stream), which it would
		// decode as the next stream's.
		st.r = brotli.NewReader(src)
	default:
		return fmt.Errorf("no stream of compression %s", name)
	}
	return nil
}

// close ends the stream: its decoder lets go of the input.
func (st *pageStream) close() {
	if st.name == compress.Codecs.Zstd && st.dec != nil && st.dec.zstd != nil {
		st.dec.zstd.Reset(nil) // (a nil input: no error)
	}
	if st.in != nil {
		st.in.f = nil
	}
	st.r, st.in, st.dec = nil, nil, nil
}

// fail records err, an error of the decoder, as the stream's: the input's
// read error when there is one, else corrupt bytes, as decodePage says it
// (the errors of arrow-go's gzip and brotli codecs are panics).
func (st *pageStream) fail(err error) error {
	switch {
	case st.in != nil && st.in.err != nil:
		err = st.in.err
	case st.name == compress.Codecs.Zstd:
		err = fmt.Errorf("corrupt %s page (%v)", st.name, err)
	case st.name != compress.Codecs.Uncompressed:
		err = fmt.Errorf("corrupt %s page: %w", st.name, panicError(err))
	}
	st.err = err
	return err
}

// recovered records the panic p of the decoder as the stream's error, as
// decodePage says it (or the input's read error).
func (st *pageStream) recovered(p any) error {
	st.err = fmt.Errorf("corrupt %s page: %w", st.name, panicError(p))
	if st.in != nil && st.in.err != nil {
		st.err = st.in.err
	}
	return st.err
}

// short records that the stream ended after total bytes (levels included).
func (st *pageStream) short(total int64) error {
	st.err = fmt.Errorf("a page said to hold %d bytes decompresses to %d", st.levels+st.unc, total)
	return st.err
}

// read fills p with the next bytes of the page, a piece at a time, checking
// ctx before each piece. p must not go past the bytes the page declares.
func (st *pageStream) read(ctx context.Context, p []byte) error {
	if st.err != nil {
		return st.err
	}
	for len(p) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(len(p), pieceBytes)
		if err := st.piece(p[:n]); err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}

// piece fills p with the next bytes of the page, driving the decoder as the
// one-shot decode does. A panic of the decoder on corrupt bytes is an error.
func (st *pageStream) piece(p []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = st.recovered(r)
		}
	}()
	switch st.name {
	case compress.Codecs.Uncompressed:
		n, err := io.ReadFull(st.r, p)
		st.done += int64(n)
		if err != nil {
			return st.fail(err)
		}
	case compress.Codecs.Gzip:
		// arrow-go's codec: io.ReadFull of the declared size.
		n, err := io.ReadFull(st.r, p)
		st.done += int64(n)
		if err != nil {
			if err == io.EOF && st.done > 0 {
				err = io.ErrUnexpectedEOF // (as one io.ReadFull of the whole page says it)
			}
			return st.fail(err)
		}
	case compress.Codecs.Brotli:
		// arrow-go's codec: reads until the buffer is full, an error, or a
		// read of nothing; an error but io.EOF is corrupt bytes.
		for len(p) > 0 {
			n, err := st.r.Read(p)
			st.done += int64(n)
			p = p[n:]
			if err != nil && err != io.EOF {
				return st.fail(err)
			}
			if len(p) > 0 && (err != nil || n == 0) {
				return st.short(st.levels + st.done)
			}
		}
	default: // zstd: DecodeAll decodes to the end of its frames
		for len(p) > 0 {
			n, err := st.r.Read(p)
			st.done += int64(n)
			p = p[n:]
			if err == io.EOF && len(p) > 0 {
				return st.short(st.levels + st.done)
			}
			if err != nil && err != io.EOF {
				return st.fail(err)
			}
		}
	}
	return nil
}

// finish reads the rest of the page (the bytes its values did not take),
// and, for zstd, to the end of the frames, or to a byte past the declared
// size: the errors of the one-shot decode of the page are the stream's.
func (st *pageStream) finish(ctx context.Context) error {
	if st.err != nil {
		return st.err
	}
	d := st.dec
	d.scratch = grow(d.scratch, int(max(1, min(int64(pieceBytes), st.unc-st.done))))
	for st.done < st.unc {
		if err := st.read(ctx, d.scratch[:min(int64(len(d.scratch)), st.unc-st.done)]); err != nil {
			return err
		}
	}
	if st.name != compress.Codecs.Zstd {
		return nil
	}
	for {
		n, panicked, err := st.past(d.scratch[:1])
		switch {
		case panicked:
			return err
		case n > 0:
			st.err = fmt.Errorf("a page said to hold %d bytes decompresses to more", st.levels+st.unc)
			return st.err
		case err == io.EOF:
			return nil
		case err != nil:
			return st.fail(err)
		}
	}
}

// past reads what comes of the decoder past the page's declared bytes
// into p; a panic of the decoder is the stream's error.
func (st *pageStream) past(p []byte) (n int, panicked bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			panicked, err = true, st.recovered(r)
		}
	}()
	n, err = st.r.Read(p)
	return n, false, err
}

// decodeInPieces decompresses a page whose bytes src are levels bytes as
// they are (the levels of a data page v2), then compressed ones, of codec
// name, into out, which the page must fill exactly, as decodePage does, but
// as a stream, a piece at a time, checking ctx between pieces.
func (d *streamDecoders) decodeInPieces(ctx context.Context, name compress.Compression, out []byte, src io.Reader, levels int, window int64) error {
	if _, err := io.ReadFull(src, out[:levels]); err != nil {
		return err
	}
	st := &d.whole
	defer st.close()
	if err := d.open(st, name, src, int64(levels), int64(len(out)-levels), window); err != nil {
		return err
	}
	if err := st.read(ctx, out[levels:]); err != nil {
		return err
	}
	return st.finish(ctx)
}

// openPage starts reading page p of the chunk the walk of g is on, a large
// PLAIN data page (streamedPlain), as the stream s.stream: its compressed
// bytes are read from the file as the stream goes. It returns the levels of
// a data page v2, which lie before its compressed bytes; those of a data
// page v1 are the stream's first bytes (streamV1Levels).
func (s *pageScratch) openPage(g *pageGuard, p *chunkPage) (*pageStream, []byte, error) {
	c := g.walk.c
	unc, comp := int64(p.uncompressed), int64(p.compressed)
	name, n := c.codec, comp
	if p.typ == pageTypeDataV2 && !p.isCompressed {
		name, n = compress.Codecs.Uncompressed, unc // arrow-go reads the uncompressed size
	}
	if n > c.end-p.at { // (as pageBytes says it)
		return nil, nil, fmt.Errorf("a page of %d bytes where the column chunk has %d left", n, c.end-p.at)
	}
	if name == compress.Codecs.Uncompressed && n != unc { // (the walk checked it)
		return nil, nil, fmt.Errorf("an uncompressed page of %d bytes said to hold %d", comp, unc)
	}
	in := g.streams.input(c, p.at, n)
	var levels int64
	if p.typ == pageTypeDataV2 {
		levels = int64(p.defBytes) + int64(p.repBytes) // (checked: at most comp and unc)
	}
	var err error
	if s.levels, err = growCharged(c.charge, "the levels of a page", s.levels, int(levels)); err != nil {
		return nil, nil, err
	}
	if _, err := io.ReadFull(in, s.levels); err != nil {
		return nil, nil, err
	}
	if err := g.streams.open(&s.stream, name, in, levels, unc-levels, g.zstdWindow); err != nil {
		s.stream.close()
		return nil, nil, err
	}
	return &s.stream, s.levels, nil
}

// streamV1Levels reads the definition levels of a data page v1 of n values
// from the front of its stream st, levels of w bits in encoding enc, into h,
// as splitV1Levels reads them from a page read whole, and returns the bytes
// of the page after them.
func (s *pageScratch) streamV1Levels(ctx context.Context, st *pageStream, enc parquet.Encoding, n, w int, h *hybrid) (int64, error) {
	size := st.unc
	switch enc {
	case parquet.Encodings.RLE:
		if size < 4 {
			return 0, fmt.Errorf("%d bytes, too short for its levels", size)
		}
		var b [4]byte
		if err := st.read(ctx, b[:]); err != nil {
			return 0, err
		}
		k := int64(binary.LittleEndian.Uint32(b[:]))
		if k > size-4 {
			return 0, fmt.Errorf("levels of %d bytes in a page of %d", k, size)
		}
		var err error
		if s.levels, err = growCharged(st.dec.charge, "the levels of a page", s.levels, int(k)); err != nil {
			return 0, err
		}
		if err := st.read(ctx, s.levels); err != nil {
			return 0, err
		}
		h.reset(s.levels, w)
		return size - 4 - k, nil
	case parquet.Encodings.BitPacked:
		k := (int64(n)*int64(w) + 7) / 8
		if n < 0 || k > size {
			return 0, fmt.Errorf("%d bit-packed levels in a page of %d bytes", n, size)
		}
		var err error
		if s.levels, err = growCharged(st.dec.charge, "the levels of a page", s.levels, int(k)); err != nil {
			return 0, err
		}
		if err := st.read(ctx, s.levels); err != nil {
			return 0, err
		}
		s.legacy = msbToLSB(s.levels, w, n, s.legacy)
		h.resetPacked(s.legacy, w, n)
		return size - k, nil
	}
	return 0, fmt.Errorf("levels of encoding %s", enc)
}
