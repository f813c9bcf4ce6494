package dataset

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/arrowagg/arrowagg/internal/snappy"
	"github.com/klauspost/compress/zstd"
)

// The guard's checks of compressed page bytes: what a page's codec can
// decode its bytes to (checkCodec), and the decompression of pages, shared
// by the guard and the page path (decodeInto).

// gzipMaxRatio is the most deflate expands its input.
const gzipMaxRatio = 1032

// zstdMaxBlock is the most a zstd block decodes to.
const zstdMaxBlock = 128 << 10

// checkCodec checks that comp compressed bytes at pos can decode to unc
// bytes, and that the decoder allocates no more.
func (g *pageGuard) checkCodec(c *guardChunk, pos, comp, unc int64) error {
	if comp == 0 && unc == 0 {
		// No bytes, decompressed to none (an empty data page v2 of nulls
		// holds its levels only: writers leave out the compressed form of
		// nothing, which Arrow C++ does not decompress).
		return nil
	}
	switch c.codec {
	case compress.Codecs.Uncompressed:
		if comp != unc {
			return fmt.Errorf("an uncompressed page of %d bytes said to hold %d", comp, unc)
		}
	case compress.Codecs.Snappy:
		b, err := g.at(c, pos, int(min(comp, binary.MaxVarintLen64)))
		if err != nil {
			return err
		}
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return errors.New("corrupt snappy page (no length)")
		}
		if v != uint64(unc) {
			return fmt.Errorf("a snappy page of %d bytes said to hold %d", v, unc)
		}
	case compress.Codecs.Gzip:
		if unc > gzipMaxRatio*comp {
			return fmt.Errorf("%d bytes of gzip said to hold %d", comp, unc)
		}
	case compress.Codecs.Zstd:
		return g.checkZstd(c, pos, comp, unc)
	case compress.Codecs.Brotli:
		// no size stored: maxPageBytes caps it
	case compress.Codecs.Lz4, lz4Raw:
		// An LZ4 block (Hadoop-framed or not) decodes into the page's
		// buffer, allocating nothing: its size is bounded by the ratio.
		if unc > lz4MaxRatio*comp+lz4MaxRatio {
			return fmt.Errorf("%d bytes of %s said to hold %d", comp, c.codec, unc)
		}
	default:
		_, err := compress.GetCodec(c.codec)
		if err == nil {
			err = fmt.Errorf("compression %s", c.codec)
		}
		return err
	}
	return nil
}

// checkZstd walks the zstd frames of comp bytes at pos: the content sizes
// they declare (which the decoder allocates) add up to unc at most, and
// their blocks can hold unc bytes. A walk that meets bytes the decoder
// rejects stops there (as the decoder does, before allocating anything
// for them).
//
// It records in g.zstdWindow the largest window the frames need.
func (g *pageGuard) checkZstd(c *guardChunk, pos, comp, unc int64) error {
	g.zstdWindow = 0
	end := pos + comp
	var declared, most int64
	for pos < end {
		b, err := g.at(c, pos, int(min(end-pos, 18))) // the longest frame header
		if err != nil {
			return err
		}
		if len(b) < 4 {
			break
		}
		magic := binary.LittleEndian.Uint32(b)
		if magic&0xfffffff0 == 0x184d2a50 { // a skippable frame
			if len(b) < 8 {
				break
			}
			pos += 8 + int64(binary.LittleEndian.Uint32(b[4:]))
			continue
		}
		if magic != 0xfd2fb528 || len(b) < 5 || b[4]&0x08 != 0 {
			break
		}
		fhd := b[4]
		single := fhd&0x20 != 0
		k := 5
		if !single {
			k++ // window descriptor
		}
		k += [4]int{0, 1, 2, 4}[fhd&3] // dictionary id
		fcs := [4]int{0, 2, 4, 8}[fhd>>6]
		if fcs == 0 && single {
			fcs = 1
		}
		if len(b) < k+fcs {
			break
		}
		var size uint64
		for i := fcs - 1; i >= 0; i-- {
			size = size<<8 | uint64(b[k+i])
		}
		if fcs == 2 {
			size += 256
		}
		g.zstdWindow = max(g.zstdWindow, zstdFrameWindow(b[5], single, size))
		if fcs > 0 {
			if size > uint64(unc-declared) {
				return fmt.Errorf("zstd frames of %d bytes or more in a page said to hold %d", uint64(declared)+size, unc)
			}
			declared += int64(size)
		}
		pos += int64(k + fcs)
		for last := false; !last && pos < end; {
			bh, err := g.at(c, pos, 3)
			if err != nil {
				return err
			}
			if len(bh) < 3 {
				pos = end
				break
			}
			v := uint32(bh[0]) | uint32(bh[1])<<8 | uint32(bh[2])<<16
			last = v&1 != 0
			n := int64(v >> 3)
			pos += 3
			switch v >> 1 & 3 {
			case 0: // raw
				pos += n
				most += n
			case 1: // one byte repeated
				pos++
				most += n
			case 2: // compressed
				pos += n
				most += zstdMaxBlock
			default:
				pos = end
			}
		}
		if fhd&0x04 != 0 {
			pos += 4 // checksum
		}
	}
	if most < unc {
		return fmt.Errorf("zstd blocks that decode to %d bytes at most in a page said to hold %d", most, unc)
	}
	return nil
}

// zstdFrameWindow is the window a zstd frame needs (as klauspost/compress's
// decoder sizes it): its content size, of size bytes, when it is a single
// segment, else what its window descriptor wd says.
func zstdFrameWindow(wd byte, single bool, size uint64) int64 {
	if single {
		return int64(min(max(size, 1<<10), 1<<62))
	}
	base := int64(1) << (10 + wd>>3)
	return base + base/8*int64(wd&7)
}

// readBody reads n bytes of the chunk at pos: a slice of the mapped file
// when inPlace allows it, valid until the file is unmapped, or else a
// buffer of g's, valid until the next read.
func (g *pageGuard) readBody(c *guardChunk, pos, n int64, inPlace bool) ([]byte, error) {
	if inPlace && c.mapped != nil && pos >= 0 && n >= 0 && pos+n <= int64(len(c.mapped)) {
		return c.mapped[pos : pos+n : pos+n], nil
	}
	var err error
	if g.body, err = growCharged(c.charge, "a page read", g.body, int(n)); err != nil {
		return nil, err
	}
	if err := readFull(c.f, g.body, pos); err != nil {
		return nil, err
	}
	return g.body, nil
}

// decompress returns the unc bytes of a page whose comp bytes at pos are
// levels bytes as they are, then compressed ones. A large page is
// decompressed as a stream (streamedCodec), its compressed bytes read from
// the file, a piece at a time, stopping with ctx's error when ctx is done.
func (g *pageGuard) decompress(ctx context.Context, c *guardChunk, pos, comp, unc, levels int64) (out []byte, err error) {
	codec, err := compress.GetCodec(c.codec)
	if err != nil {
		return nil, err
	}
	if streamedCodec(c.codec, unc, g.zstdWindow) {
		if g.out, err = growCharged(c.charge, "a page decompressed", g.out, int(unc)); err != nil {
			return nil, err
		}
		if err := g.streams.decodeInPieces(ctx, c.codec, g.out, g.streams.input(c, pos, comp), int(levels), g.zstdWindow); err != nil {
			return nil, err
		}
		return g.out, nil
	}
	// (A page decoded by a goroutine of its own, decodeOneShot, is read
	// out of the mapping first: that goroutine cannot catch its faults.)
	src, err := g.readBody(c, pos, comp, unc <= streamPageBytes)
	if err != nil {
		return nil, err
	}
	if g.out, err = growCharged(c.charge, "a page decompressed", g.out, int(unc)); err != nil {
		return nil, err
	}
	if err := decodeOneShot(ctx, codec, c.codec, &g.zstd, g.out, src, int(levels), func() { g.out, g.body, g.win = nil, nil, nil }); err != nil {
		return nil, err
	}
	return g.out, nil
}

// decodeOneShot is decodePage for the pages that have no stream (snappy,
// LZ4, zstd of very large windows): a large one (over streamPageBytes) is
// decoded by a goroutine of its own, and a cancel returns at once; the
// goroutine finishes the page (a fraction of a second) into buffers the
// caller gives up (abandon drops its references; a fresh zstd decoder
// replaces zd), then they are garbage. Small pages decode in the caller.
func decodeOneShot(ctx context.Context, codec compress.Codec, name compress.Compression, zd *zstdDecoder, out, src []byte, levels int, abandon func()) error {
	if int64(len(out)) <= streamPageBytes {
		return decodePage(codec, name, zd, out, src, levels)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	done := make(chan error, 1)
	z := *zd // the goroutine's own: a cancel leaves it to it
	go func() { done <- decodePage(codec, name, &z, out, src, levels) }()
	select {
	case err := <-done:
		*zd = z // (a decoder made on first use)
		return err
	case <-ctx.Done():
		abandon()
		*zd = zstdDecoder{}
		return ctx.Err()
	}
}

// emptyCodec is one of arrow-go's codecs that decodes no bytes to none
// (where none are expected):
// arrow-go's page reader decompresses the empty values of a data page v2
// of nulls, which its snappy and gzip codecs take for corrupt bytes (a
// panic). Registered over arrow-go's own for the codecs with a framing.
type emptyCodec struct{ compress.Codec }

func (c emptyCodec) Decode(dst, src []byte) []byte {
	if len(src) == 0 && len(dst) == 0 {
		return dst[:0]
	}
	return c.Codec.Decode(dst, src)
}

// snappyCodec is arrow-go's snappy codec whose Decode is internal/snappy's
// (faster on the short operations that columns of numbers compress into;
// it panics on corrupt bytes, as arrow-go's does), so that the readers of
// arrow-go (pqarrow's, the guard's) decode as the page path does.
type snappyCodec struct{ compress.Codec }

func (c snappyCodec) Decode(dst, src []byte) []byte {
	out, err := snappy.Decode(dst, src)
	if err != nil {
		panic(err)
	}
	return out
}

func init() {
	if c, err := compress.GetCodec(compress.Codecs.Snappy); err == nil {
		compress.RegisterCodec(compress.Codecs.Snappy, emptyCodec{snappyCodec{c}})
	}
	for _, name := range []compress.Compression{compress.Codecs.Gzip, compress.Codecs.Brotli, compress.Codecs.Zstd} {
		if c, err := compress.GetCodec(name); err == nil {
			compress.RegisterCodec(name, emptyCodec{c})
		}
	}
}

// zstdDecoder is a worker's own zstd decoder. arrow-go's zstd codec decodes
// every page of the process with one klauspost/compress decoder, whose
// concurrency is min(4, GOMAXPROCS): at most 4 pages decompress at once
// however many workers there are, the others wait for one of its 4 block
// decoders. A decoder of concurrency 1 per worker decodes in the worker's
// goroutine (DecodeAll, synchronous, starting no goroutine: nothing to
// close), into the page's buffer, as the page path's pages do.
//
// It decodes no more than the buffer holds: a frame that does not declare
// its size (the walk's checkZstd bounds those that do) can hold blocks of
// 128 KiB in 4 bytes each, and DecodeAll would grow its output for all of
// them (2.6 GiB allocated for 16 KB of such blocks in a page said to hold
// 1 MiB).
type zstdDecoder struct {
	d *zstd.Decoder
}

// errZstdPastPage is the error of decode for a page whose frames decode to
// more bytes than its buffer.
var errZstdPastPage = zstd.ErrDecoderSizeExceeded

// decode decompresses src into dst[:0], and fails with errZstdPastPage
// past len(dst); a nil decoder is made on first use.
func (z *zstdDecoder) decode(dst, src []byte) ([]byte, error) {
	if z.d == nil {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecodeAllCapLimit(true))
		if err != nil {
			return nil, err
		}
		z.d = d
	}
	return z.d.DecodeAll(src, dst[:0:len(dst)])
}

// decodePage decompresses a page whose bytes src are levels bytes as they
// are (the levels of a data page v2), then compressed ones, of codec (name),
// into out, which the page must fill exactly: a page that decompresses to
// another size is an error, as is a panic of the codec on corrupt bytes.
// zstd pages are decoded by zd (arrow-go's registered codec decodes the
// others: for snappy, snappyCodec).
func decodePage(codec compress.Codec, name compress.Compression, zd *zstdDecoder, out, src []byte, levels int) (err error) {
	copy(out, src[:levels])
	if len(src) == levels && len(out) == levels {
		return nil // nothing compressed, nothing to decompress (checkCodec)
	}
	dst := out[levels:]
	if dst == nil {
		// (nil would make the gzip and brotli codecs read all there is)
		dst = []byte{}
	}
	defer func() {
		if p := recover(); p != nil {
			if _, fault := p.(interface{ Addr() uintptr }); fault {
				err = faultError(p) // src lies in a mapped file that was truncated
				return
			}
			err = fmt.Errorf("corrupt %s page: %w", name, panicError(p))
		}
	}()
	var dec []byte
	if name == compress.Codecs.Zstd {
		var derr error
		if dec, derr = zd.decode(dst, src[levels:]); derr != nil {
			if errors.Is(derr, errZstdPastPage) {
				return fmt.Errorf("a page said to hold %d bytes decompresses to more", len(out))
			}
			return fmt.Errorf("corrupt %s page (%v)", name, derr) // as arrow-go's codec panics with it
		}
	} else {
		dec = codec.Decode(dst, src[levels:])
	}
	if len(dec) != len(dst) {
		return fmt.Errorf("a page said to hold %d bytes decompresses to %d", len(out), levels+len(dec))
	}
	if len(dec) > 0 && &dec[0] != &dst[0] {
		copy(dst, dec)
	}
	return nil
}
