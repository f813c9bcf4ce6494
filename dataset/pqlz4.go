package dataset

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/pierrec/lz4/v4"
)

// The LZ4 codecs of Parquet, which arrow-go v17 does not implement:
//
//   - LZ4_RAW: each page one LZ4 block (no framing);
//   - LZ4 (deprecated): the Hadoop framing, blocks each behind the
//     big-endian sizes of their decompressed and compressed bytes, or, in
//     files of older parquet-cpp, one LZ4 block. As Arrow C++ does, a page
//     is read as Hadoop frames first, and as one block when its bytes are
//     not that.
//
// They are registered with arrow-go's codec registry (compress.RegisterCodec),
// so that its page reader (pqarrow) and the page path decode them alike;
// github.com/pierrec/lz4/v4's block API decodes into the page's buffer,
// allocating nothing.

// lz4Raw is the Compression of LZ4_RAW (the thrift enum's 7; arrow-go's
// Codecs has no name for it).
var lz4Raw = compress.Compression(7)

// lz4MaxRatio bounds how much an LZ4 block expands: a match token of one
// byte and its 255-valued length bytes, 255 bytes of output each.
const lz4MaxRatio = 255

func init() {
	compress.RegisterCodec(lz4Raw, lz4Codec{hadoop: false})
	compress.RegisterCodec(compress.Codecs.Lz4, lz4Codec{hadoop: true})
}

// lz4Codec decodes LZ4 pages; hadoop: the Hadoop framing first (LZ4).
// Only decoding is implemented: arrowagg writes no Parquet.
type lz4Codec struct{ hadoop bool }

// errLZ4Encode is the panic of the encoding methods, which no reader calls.
var errLZ4Encode = errors.New("arrowagg's lz4 codec only decodes")

func (c lz4Codec) name() compress.Compression {
	if c.hadoop {
		return compress.Codecs.Lz4
	}
	return lz4Raw
}

// Decode decompresses the page src into dst, which must be the page's
// uncompressed size, and returns the bytes it decoded (dst[:n]). Corrupt
// bytes are a panic of an error, as arrow-go's codecs report them (the
// readers recover it).
func (c lz4Codec) Decode(dst, src []byte) []byte {
	n, err := c.decode(dst, src)
	if err != nil {
		panic(err)
	}
	return dst[:n]
}

// decode decompresses src into dst and returns the bytes decoded.
func (c lz4Codec) decode(dst, src []byte) (int, error) {
	if c.hadoop {
		if n, ok := decodeHadoopLZ4(dst, src); ok {
			return n, nil
		}
	}
	if len(src) == 0 {
		return 0, nil
	}
	n, err := lz4.UncompressBlock(src, dst)
	if err != nil {
		return 0, fmt.Errorf("lz4 block: %w", err)
	}
	return n, nil
}

// decodeHadoopLZ4 decodes src as Hadoop LZ4 frames into dst, as Arrow C++
// does (TryDecompressHadoop): each frame is the big-endian uint32 sizes of
// its decompressed and compressed bytes, then an LZ4 block of them. False
// when src is not that: a frame past the input or the output, a block that
// fails or decodes to another size, bytes left over.
func decodeHadoopLZ4(dst, src []byte) (int, bool) {
	total := 0
	for len(src) >= 8 {
		unc := binary.BigEndian.Uint32(src)
		comp := binary.BigEndian.Uint32(src[4:])
		src = src[8:]
		if uint64(comp) > uint64(len(src)) || uint64(unc) > uint64(len(dst)-total) {
			return 0, false
		}
		n, err := lz4.UncompressBlock(src[:comp], dst[total:total+int(unc)])
		if err != nil || n != int(unc) {
			return 0, false
		}
		src = src[comp:]
		total += n
	}
	return total, len(src) == 0
}

func (c lz4Codec) NewReader(io.Reader) io.ReadCloser {
	panic(fmt.Errorf("no stream of compression %s", c.name()))
}
func (lz4Codec) NewWriter(io.Writer) io.WriteCloser { panic(errLZ4Encode) }
func (lz4Codec) NewWriterLevel(io.Writer, int) (io.WriteCloser, error) {
	return nil, errLZ4Encode
}
func (lz4Codec) Encode(dst, src []byte) []byte             { panic(errLZ4Encode) }
func (lz4Codec) EncodeLevel(dst, src []byte, _ int) []byte { panic(errLZ4Encode) }
func (lz4Codec) CompressBound(n int64) int64               { return int64(lz4.CompressBlockBound(int(n))) }
