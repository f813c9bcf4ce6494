package hostile

import (
	"bufio"
	"encoding/binary"
	"io"
	"os"

	"github.com/apache/arrow/go/v17/parquet/compress"
)

// Parquet files written byte by byte: page headers and footers that no
// writer produces, around pages that say what the case needs.

// Parquet's enumerations, as parquet.thrift numbers them.
const (
	typeInt32    = 1
	typeInt64    = 2
	typeByteArr  = 6
	typeFixedLen = 7

	repRequired = 0
	repOptional = 1

	convUTF8    = 0
	convDecimal = 5

	encPlain    = 0
	encRLE      = 3
	encRLEDict  = 8
	codecNone   = 0
	codecGzip   = 2
	codecBrotli = 4
	codecZstd   = 6

	pageData = 0
	pageDict = 2
)

// element is a SchemaElement.
type element struct {
	name                  string
	typ, typeLen, rep     int32 // typ < 0: a group
	children              int32
	conv, scale, precison int32 // conv < 0: none
}

func group(name string, rep, children int32) element {
	return element{name: name, typ: -1, rep: rep, children: children, conv: -1}
}

func leaf(name string, typ, rep int32) element {
	return element{name: name, typ: typ, rep: rep, conv: -1}
}

// chunk is a column chunk's metadata.
type chunk struct {
	typ        int32
	path       []string
	codec      int32
	values     int64
	dataOff    int64
	dictOff    int64 // 0: no dictionary page
	size       int64 // compressed bytes from the first page on
	uncompSize int64
}

type rowGroup struct {
	rows   int64
	chunks []chunk
}

// pqWriter writes a Parquet file: the magic, the pages, then the footer.
type pqWriter struct {
	f   *os.File
	w   *bufio.Writer
	pos int64
}

func newPQ(path string) (*pqWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	p := &pqWriter{f: f, w: bufio.NewWriterSize(f, 1<<20)}
	p.write([]byte("PAR1"))
	return p, nil
}

func (p *pqWriter) write(b []byte) int64 {
	at := p.pos
	p.w.Write(b) // (errors stick in the bufio.Writer; finish returns them)
	p.pos += int64(len(b))
	return at
}

// finish writes the footer and closes the file.
func (p *pqWriter) finish(schema []element, rows int64, rgs []rowGroup) error {
	w := &tw{}
	w.begin()
	w.i32(1, 1)
	w.list(2, ctStruct, len(schema))
	for _, e := range schema {
		w.begin()
		if e.typ >= 0 {
			w.i32(1, e.typ)
		}
		if e.typeLen > 0 {
			w.i32(2, e.typeLen)
		}
		w.i32(3, e.rep)
		w.str(4, e.name)
		if e.typ < 0 {
			w.i32(5, e.children)
		}
		if e.conv >= 0 {
			w.i32(6, e.conv)
			if e.conv == convDecimal {
				w.i32(7, e.scale)
				w.i32(8, e.precison)
			}
		}
		w.end()
	}
	w.i64(3, rows)
	w.list(4, ctStruct, len(rgs))
	for _, rg := range rgs {
		w.begin()
		w.list(1, ctStruct, len(rg.chunks))
		var total int64
		for _, c := range rg.chunks {
			total += c.uncompSize
			w.begin()
			w.i64(2, c.dataOff)
			w.structField(3)
			w.i32(1, c.typ)
			w.list(2, ctI32, 2)
			w.elemI32(encPlain)
			w.elemI32(encRLE)
			w.list(3, ctBinary, len(c.path))
			for _, s := range c.path {
				w.elemStr(s)
			}
			w.i32(4, c.codec)
			w.i64(5, c.values)
			w.i64(6, c.uncompSize)
			w.i64(7, c.size)
			w.i64(9, c.dataOff)
			if c.dictOff > 0 {
				w.i64(11, c.dictOff)
			}
			w.end()
			w.end()
		}
		w.i64(2, total)
		w.i64(3, rg.rows)
		w.end()
	}
	w.str(6, "arrowagg hostile")
	w.end()
	p.write(w.b)
	var tail [8]byte
	binary.LittleEndian.PutUint32(tail[:], uint32(len(w.b)))
	copy(tail[4:], "PAR1")
	p.write(tail[:])
	if err := p.w.Flush(); err != nil {
		p.f.Close()
		return err
	}
	return p.f.Close()
}

// pageHeader is a data page (v1) or dictionary page header.
func pageHeader(typ int32, values int32, enc int32, unc, comp int32) []byte {
	w := &tw{}
	w.begin()
	w.i32(1, typ)
	w.i32(2, unc)
	w.i32(3, comp)
	if typ == pageDict {
		w.structField(7)
		w.i32(1, values)
		w.i32(2, encPlain)
		w.end()
	} else {
		w.structField(5)
		w.i32(1, values)
		w.i32(2, enc)
		w.i32(3, encRLE)
		w.i32(4, encRLE)
		w.end()
	}
	w.end()
	return w.b
}

// page writes a page of header h's type whose body is body, compressed
// with codec, and returns its offset and size.
func (p *pqWriter) page(typ, values, enc int32, codec int32, body []byte) (int64, int64) {
	comp := body
	if codec != codecNone {
		comp = compressBytes(codec, body)
	}
	h := pageHeader(typ, values, enc, int32(len(body)), int32(len(comp)))
	at := p.write(h)
	p.write(comp)
	return at, int64(len(h) + len(comp))
}

// rawPage writes a page header declaring unc bytes and values, followed by
// the compressed bytes comp as they are.
func (p *pqWriter) rawPage(typ, values, enc int32, unc int32, comp []byte) (int64, int64) {
	h := pageHeader(typ, values, enc, unc, int32(len(comp)))
	at := p.write(h)
	p.write(comp)
	return at, int64(len(h) + len(comp))
}

func compressBytes(codec int32, b []byte) []byte {
	c, err := compress.GetCodec(compress.Compression(codec))
	if err != nil {
		panic(err)
	}
	return c.Encode(nil, b)
}

// zeros compresses n zero bytes with codec, streaming (at a fast level).
func zeros(codec int32, n int64) ([]byte, error) {
	c, err := compress.GetCodec(compress.Compression(codec))
	if err != nil {
		return nil, err
	}
	var out sliceWriter
	level := 1
	if codec == codecBrotli {
		level = 0 // (its fastest)
	}
	wc, err := c.NewWriterLevel(&out, level)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 1<<20)
	for left := n; left > 0; left -= int64(len(buf)) {
		if _, err := wc.Write(buf[:min(int64(len(buf)), left)]); err != nil {
			return nil, err
		}
	}
	if err := wc.Close(); err != nil {
		return nil, err
	}
	return out.b, nil
}

type sliceWriter struct{ b []byte }

func (s *sliceWriter) Write(p []byte) (int, error) {
	s.b = append(s.b, p...)
	return len(p), nil
}

var _ io.Writer = (*sliceWriter)(nil)

// levelsV1 are the definition levels of a data page v1: the length, then
// one RLE run of n levels of value v, bit width bw.
func levelsV1(n int, v int, bw int) []byte {
	run := binary.AppendUvarint(nil, uint64(n)<<1)
	for i := 0; i < (bw+7)/8; i++ {
		run = append(run, byte(v>>(8*i)))
	}
	out := binary.LittleEndian.AppendUint32(nil, uint32(len(run)))
	return append(out, run...)
}

// bitWidth is the bits of levels up to max.
func bitWidth(max int) int {
	n := 0
	for ; max > 0; max >>= 1 {
		n++
	}
	return n
}
