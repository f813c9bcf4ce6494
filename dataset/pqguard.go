package dataset

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/metadata"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
)

// arrow-go's Parquet decoders panic on some corrupt bytes; the readers
// recover those panics into errors, which they can only do for code that
// runs in goroutines of their own. pqarrow reads the leaves of a struct from
// goroutines it starts (an errgroup, even with Parallel off), both when it
// builds a struct's reader and in each LoadBatch: a panic there ends the
// process. So no column is read through a pqarrow struct reader: every leaf,
// nested or not, gets a reader of its own (newLeafFileReader), and all of
// arrow-go's decoding runs in the worker that recovers its panics.

// newLeafFileReader returns a pqarrow reader of the Parquet file pf whose
// top-level fields are the file's leaf columns, field i being leaf column i,
// with the levels (LevelInfo) it has in the file's schema. Field readers of
// it are pqarrow's leaf readers, which decode in the caller's goroutine, and
// read a nested leaf into the array that the struct reader would hold as
// that leaf's child: null wherever the leaf or one of its ancestors is (the
// definition levels of the leaf say so), the leaf's values elsewhere.
//
// pqarrow resolves the fields of FileReader.GetFieldReader in the exported
// FileReader.Manifest: the manifest is replaced by one with the leaves as
// fields (the other fields of the manifest are kept as they are).
func newLeafFileReader(pf *file.Reader, mem memory.Allocator) (*pqarrow.FileReader, error) {
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, mem)
	if err != nil {
		return nil, err
	}
	n := pf.MetaData().Schema.NumColumns()
	leaves := *fr.Manifest
	leaves.Fields = make([]pqarrow.SchemaField, n)
	for col := 0; col < n; col++ {
		sf, ok := fr.Manifest.ColIndexToField[col]
		if !ok || sf == nil || sf.Field == nil || !sf.IsLeaf() || len(sf.Children) != 0 {
			return nil, fmt.Errorf("no Arrow field for Parquet leaf column %d", col)
		}
		leaves.Fields[col] = *sf
	}
	fr.Manifest = &leaves
	return fr, nil
}

// arrow-go also allocates whatever sizes and counts a file declares, before
// it reads the bytes that would back them: the page reader a buffer of the
// uncompressed_page_size of each page header (up to 2 GiB) and one of its
// compressed_page_size, the zstd decoder one of the content size of each
// frame header (up to 64 GiB), the decoders of BYTE_ARRAY and
// FIXED_LEN_BYTE_ARRAY dictionaries 24 bytes per entry up to the largest
// index of a batch (indices of up to 32 bits), those of DELTA_* pages 4
// bytes per value declared and a buffer of each block's declared size. A
// corrupt file can thus make it allocate gigabytes, which Go does not
// survive. So before arrow-go reads a column chunk, the worker walks the
// chunk's pages itself (pageGuard.check), as arrow-go's page reader will,
// and checks every size and count against what the file justifies:
//
//   - a page's compressed bytes lie inside the column chunk, and its
//     uncompressed size is what those bytes can decode to: equal for
//     UNCOMPRESSED, the length SNAPPY stores in front, at most 1032 times
//     the bytes for GZIP (deflate's largest ratio), at most what the blocks
//     of the ZSTD frames can hold, whose content sizes add up to no more;
//     BROTLI stores no size: its pages are only capped by maxPageBytes, as
//     every page is;
//   - a dictionary page holds its values (at least 4 bytes each for
//     BYTE_ARRAY, the value size for the others);
//   - for chunks read by arrow-go's decoders (every column but those the
//     page path aggregates, whose own decoding checks all of it), the pages
//     whose encoding makes the decoders allocate from their content, or read
//     past its end, are decompressed and checked too: every dictionary index
//     is there and in the dictionary (arrow-go allocates an entry per index
//     up to the largest for BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY, and reads a
//     short index stream of any type past its end, into stale bytes: a
//     corrupt file made it loop forever), the blocks of
//     DELTA_* encodings have the geometry the format prescribes (at most
//     maxDeltaBlock values), and the values that DELTA_LENGTH_BYTE_ARRAY and
//     DELTA_BYTE_ARRAY decoders allocate for, which their bytes do not bound
//     (a value can take no bit), stay within the decode budget.
//
// The page path's reader then allocates its page buffers from the worker's
// pageBuffers, which refuse anything larger than the chunk's largest page:
// a walk that missed what arrow-go reads fails rather than allocates.
//
// The pages that need no decompression cost one small read each, of their
// header; those decompressed are the dictionary-encoded pages of the
// columns arrow-go decodes (the page path decodes the others itself), whose
// indices cost little next to the values decoding them builds, and the
// rarer DELTA_* pages.

// maxPageBytes caps the uncompressed size of any page.
const maxPageBytes = 1 << 30

// maxPageHeaderBytes is the largest page header arrow-go's page reader
// reads (its default limit).
const maxPageHeaderBytes = 4 << 20

// gzipMaxRatio is the most deflate expands its input.
const gzipMaxRatio = 1032

// zstdMaxBlock is the most a zstd block decodes to.
const zstdMaxBlock = 128 << 10

// maxDeltaBlock is the most values a DELTA_BINARY_PACKED block may declare
// (writers use 128 to a few thousand): arrow-go allocates a miniblock of
// them.
const maxDeltaBlock = 1 << 20

// minDecodeBudget is the least decode budget the counts of DELTA_* pages
// are checked against.
const minDecodeBudget = arrowTaskBytes

// Page types (parquet.thrift's PageType).
const (
	pageTypeData   = 0
	pageTypeDict   = 2
	pageTypeDataV2 = 3
)

// pageHeader is what the guard reads of a page header (parquet.thrift's
// PageHeader, with the fields of its data, data v2 or dictionary page
// header).
type pageHeader struct {
	typ, uncompressed, compressed int32
	// which of the above and of the headers below were present
	hasType, hasUncompressed, hasCompressed bool
	hasData, hasDataV2, hasDict             bool

	numValues, encoding int32 // of the page header of the page's type
	defEncoding         int32 // data page v1
	repEncoding         int32 // data page v1
	defBytes, repBytes  int32 // data page v2
	isCompressed        bool  // data page v2 (true unless said otherwise)
}

// The thrift compact protocol's types.
const (
	ctStop = iota
	ctTrue
	ctFalse
	ctByte
	ctI16
	ctI32
	ctI64
	ctDouble
	ctBinary
	ctList
	ctSet
	ctMap
	ctStruct
	ctUUID
)

// maxThriftDepth is how deep the guard follows nested thrift values, as
// the thrift library does.
const maxThriftDepth = 64

var errHeaderShort = errors.New("page header cut short")

// compact decodes the thrift compact protocol as the thrift library does
// (varints of any length, truncated to their type).
type compact struct {
	b   []byte
	pos int
	err error // the first error; errHeaderShort when the bytes ran out
}

func (c *compact) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

func (c *compact) byte() byte {
	if c.err != nil {
		return 0
	}
	if c.pos >= len(c.b) {
		c.fail(errHeaderShort)
		return 0
	}
	c.pos++
	return c.b[c.pos-1]
}

func (c *compact) skipBytes(n int64) {
	if c.err != nil {
		return
	}
	if n < 0 {
		c.fail(fmt.Errorf("a thrift value of %d bytes", n))
		return
	}
	if n > int64(len(c.b)-c.pos) {
		c.pos = len(c.b)
		c.fail(errHeaderShort)
		return
	}
	c.pos += int(n)
}

func (c *compact) varint() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		b := c.byte()
		if c.err != nil {
			return 0
		}
		if shift < 64 {
			v |= uint64(b&0x7f) << shift
		}
		if b&0x80 == 0 {
			return v
		}
	}
}

func (c *compact) i32() int32 {
	n := int32(c.varint())
	return int32(uint32(n)>>1) ^ -(n & 1)
}

// fields reads the fields of a struct up to its stop, calling field with
// the id and type of each; field reads the value or skips it.
func (c *compact) fields(field func(id int16, typ byte)) {
	var last int16
	for {
		b := c.byte()
		if c.err != nil || b == ctStop {
			return
		}
		id := last + int16(b>>4)
		if b>>4 == 0 {
			id = int16(c.i32()) // (as the thrift library reads an i16)
		}
		last = id
		field(id, b&0x0f)
		if c.err != nil {
			return
		}
	}
}

// skip skips a value of type typ; a bool field's value is its type, one in
// a collection a byte.
func (c *compact) skip(typ byte, inCollection bool, depth int) {
	if depth > maxThriftDepth {
		c.fail(errors.New("thrift values nested too deep"))
		return
	}
	switch typ {
	case ctTrue, ctFalse:
		if inCollection {
			c.byte()
		}
	case ctByte:
		c.byte()
	case ctI16, ctI32, ctI64:
		c.varint()
	case ctDouble:
		c.skipBytes(8)
	case ctUUID:
		c.skipBytes(16)
	case ctBinary:
		c.skipBytes(int64(int32(c.varint())))
	case ctList, ctSet:
		b := c.byte()
		n := int64(b >> 4)
		if n == 15 {
			n = int64(int32(c.varint()))
		}
		if n < 0 {
			c.fail(fmt.Errorf("a thrift list of %d values", n))
		}
		for i := int64(0); i < n && c.err == nil; i++ { // each takes a byte at least
			c.skip(b&0x0f, true, depth+1)
		}
	case ctMap:
		n := int64(int32(c.varint()))
		if n < 0 {
			c.fail(fmt.Errorf("a thrift map of %d values", n))
		}
		if n > 0 {
			kv := c.byte()
			for i := int64(0); i < n && c.err == nil; i++ {
				c.skip(kv>>4, true, depth+1)
				c.skip(kv&0x0f, true, depth+1)
			}
		}
	case ctStruct:
		c.fields(func(_ int16, t byte) { c.skip(t, false, depth+1) })
	default:
		c.fail(fmt.Errorf("thrift type %d", typ))
	}
}

// int32Field reads an i32 field into v (skipping one of another type, as
// the generated code does) and says whether it was one.
func (c *compact) int32Field(typ byte, v *int32) bool {
	if typ != ctI32 {
		c.skip(typ, false, 1)
		return false
	}
	*v = c.i32()
	return true
}

// parsePageHeader decodes the page header at the front of b and returns
// its length; errHeaderShort when b ends first.
func parsePageHeader(b []byte) (h pageHeader, n int, err error) {
	c := &compact{b: b}
	h.isCompressed = true
	// sub reads the page header of the page's kind.
	sub := func(typ byte, found *bool, field func(id int16, typ byte)) {
		if typ != ctStruct {
			c.skip(typ, false, 1)
			return
		}
		*found = true
		c.fields(field)
	}
	c.fields(func(id int16, typ byte) {
		switch id {
		case 1:
			h.hasType = c.int32Field(typ, &h.typ)
		case 2:
			h.hasUncompressed = c.int32Field(typ, &h.uncompressed)
		case 3:
			h.hasCompressed = c.int32Field(typ, &h.compressed)
		case 5:
			sub(typ, &h.hasData, func(id int16, typ byte) {
				switch id {
				case 1:
					c.int32Field(typ, &h.numValues)
				case 2:
					c.int32Field(typ, &h.encoding)
				case 3:
					c.int32Field(typ, &h.defEncoding)
				case 4:
					c.int32Field(typ, &h.repEncoding)
				default:
					c.skip(typ, false, 2)
				}
			})
		case 7:
			sub(typ, &h.hasDict, func(id int16, typ byte) {
				switch id {
				case 1:
					c.int32Field(typ, &h.numValues)
				case 2:
					c.int32Field(typ, &h.encoding)
				default:
					c.skip(typ, false, 2)
				}
			})
		case 8:
			sub(typ, &h.hasDataV2, func(id int16, typ byte) {
				switch id {
				case 1:
					c.int32Field(typ, &h.numValues)
				case 4:
					c.int32Field(typ, &h.encoding)
				case 5:
					c.int32Field(typ, &h.defBytes)
				case 6:
					c.int32Field(typ, &h.repBytes)
				case 7:
					if typ == ctTrue || typ == ctFalse {
						h.isCompressed = typ == ctTrue
					} else {
						c.skip(typ, false, 2)
					}
				default:
					c.skip(typ, false, 2)
				}
			})
		default:
			c.skip(typ, false, 1)
		}
	})
	if c.err != nil {
		return h, 0, c.err
	}
	if !h.hasType || !h.hasUncompressed || !h.hasCompressed {
		return h, 0, errors.New("corrupt page header (a required field is missing)")
	}
	return h, c.pos, nil
}

// guard checks the pages of column chunk cc, of Parquet leaf column col,
// before arrow-go reads them (decoded: through its decoders), and returns
// the largest uncompressed page. Encrypted chunks, whose page headers
// arrow-go cannot read without keys, are left to it.
func (r *parquetRun) guard(ctx context.Context, g *pageGuard, f io.ReaderAt, size int64, cc *metadata.ColumnChunkMetaData, col int, decoded bool) (int64, error) {
	if cc.CryptoMetadata() != nil {
		return maxPageBytes, nil
	}
	off, n, err := chunkRange(r.pqf.meta, cc, size)
	if err != nil {
		return 0, err
	}
	descr := r.pqf.meta.Schema.Column(col)
	return g.check(ctx, &guardChunk{
		f: f, off: off, end: off + n, values: cc.NumValues(), codec: cc.Compression(),
		phys: descr.PhysicalType(), typeLen: descr.TypeLength(), maxDef: descr.MaxDefinitionLevel(), maxRep: descr.MaxRepetitionLevel(),
		decoded: decoded, budget: r.decodeBytes,
	})
}

// guardChunk is a column chunk as the guard checks it.
type guardChunk struct {
	f        io.ReaderAt
	off, end int64 // its bytes, as chunkRange has them
	// values is the chunk's num_values: arrow-go reads pages until their
	// values reach it.
	values  int64
	codec   compress.Compression
	phys    parquet.Type
	typeLen int
	maxDef  int16
	maxRep  int16
	// decoded: arrow-go's decoders read the values (check what they
	// allocate from).
	decoded bool
	// budget bounds what arrow-go allocates per value of a DELTA_* page.
	budget int64
}

// pageGuard checks column chunks; a worker reuses it chunk after chunk.
type pageGuard struct {
	win    []byte // bytes of the file from winAt on
	winAt  int64
	body   []byte // a page's bytes
	out    []byte // a page's decompressed bytes
	idx    []int32
	legacy []byte
}

// guardKeep is the largest buffer a pageGuard keeps between chunks.
const guardKeep = 4 << 20

// at returns up to n bytes of the chunk from pos on (fewer at its end),
// reading the file when they are not buffered.
func (g *pageGuard) at(c *guardChunk, pos int64, n int) ([]byte, error) {
	n = int(min(int64(n), c.end-pos))
	if n <= 0 {
		return nil, nil
	}
	if pos >= g.winAt && pos+int64(n) <= g.winAt+int64(len(g.win)) {
		return g.win[pos-g.winAt : pos-g.winAt+int64(n)], nil
	}
	// read ahead a little: a page header and what follows it
	m := int(min(int64(max(n, 512)), c.end-pos))
	g.win = grow(g.win, m)
	if err := readFull(c.f, g.win, pos); err != nil {
		g.win = g.win[:0]
		return nil, err
	}
	g.winAt = pos
	return g.win[:n], nil
}

// readFull reads len(b) bytes of f at off.
func readFull(f io.ReaderAt, b []byte, off int64) error {
	n, err := f.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// header reads the page header at pos.
func (g *pageGuard) header(c *guardChunk, pos int64) (pageHeader, int, error) {
	for size := 1 << 10; ; size *= 2 {
		b, err := g.at(c, pos, size)
		if err != nil {
			return pageHeader{}, 0, err
		}
		h, n, err := parsePageHeader(b)
		if errors.Is(err, errHeaderShort) && len(b) == size && size < maxPageHeaderBytes {
			continue
		}
		return h, n, err
	}
}

// check walks the pages of chunk c as arrow-go's page reader will, and
// checks them; it returns the largest uncompressed page size.
func (g *pageGuard) check(ctx context.Context, c *guardChunk) (largest int64, err error) {
	defer func() {
		if cap(g.body) > guardKeep {
			g.body = nil
		}
		if cap(g.out) > guardKeep {
			g.out = nil
		}
		if cap(g.win) > guardKeep {
			g.win = nil
		}
		g.win = g.win[:0]
	}()
	dict := int64(-1) // values of the dictionary page
	var seen int64    // values of the data pages so far
	pos := c.off
	for page := 0; seen < c.values; page++ {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if pos >= c.end {
			return largest, nil // arrow-go stops: pqarrow says what is missing
		}
		h, n, err := g.header(c, pos)
		if err != nil {
			return 0, fmt.Errorf("page %d: %w", page, err)
		}
		pos += int64(n)
		if err := g.checkPage(c, page, &h, pos, &dict); err != nil {
			return 0, fmt.Errorf("page %d: %w", page, err)
		}
		largest = max(largest, int64(h.uncompressed))
		switch {
		case h.typ == pageTypeDataV2 && !h.isCompressed:
			pos += int64(h.uncompressed) // arrow-go reads that many bytes
		case h.typ == pageTypeData || h.typ == pageTypeDict || h.typ == pageTypeDataV2:
			pos += int64(h.compressed)
		default:
			// arrow-go skips a page of another type without moving past
			// its bytes: the next header it reads is there.
		}
		if h.typ == pageTypeData || h.typ == pageTypeDataV2 {
			seen += int64(h.numValues)
		}
	}
	return largest, nil
}

// checkPage checks the page of header h whose bytes start at pos.
func (g *pageGuard) checkPage(c *guardChunk, page int, h *pageHeader, pos int64, dict *int64) error {
	unc, comp := int64(h.uncompressed), int64(h.compressed)
	if unc < 0 || comp < 0 {
		return fmt.Errorf("corrupt page header (%d bytes compressed, %d uncompressed)", comp, unc)
	}
	if unc > maxPageBytes {
		return fmt.Errorf("a page of %d bytes (at most %d are read)", unc, maxPageBytes)
	}
	left := c.end - pos
	switch h.typ {
	case pageTypeDict:
		if !h.hasDict {
			return errors.New("corrupt page header (a dictionary page without its header)")
		}
		if *dict >= 0 {
			return errors.New("a second dictionary page")
		}
		if comp > left {
			return fmt.Errorf("a page of %d bytes where the column chunk has %d left", comp, left)
		}
		if err := g.checkCodec(c, pos, comp, unc); err != nil {
			return err
		}
		nv := int64(h.numValues)
		if per := plainBits(c.phys, c.typeLen); nv < 0 || nv*per > 8*unc {
			return fmt.Errorf("a dictionary page of %d values in %d bytes", nv, unc)
		}
		*dict = nv
		return nil
	case pageTypeData:
		if !h.hasData {
			return errors.New("corrupt page header (a data page without its header)")
		}
		if comp > left {
			return fmt.Errorf("a page of %d bytes where the column chunk has %d left", comp, left)
		}
		if h.numValues < 0 {
			return fmt.Errorf("a page of %d values", h.numValues)
		}
		if err := g.checkCodec(c, pos, comp, unc); err != nil {
			return err
		}
		if !c.decoded || !decodersAllocate(c.phys, parquet.Encoding(h.encoding)) {
			return nil
		}
		data, err := g.decompress(c, pos, comp, unc, 0)
		if err != nil {
			return err
		}
		var defs hybrid
		if c.maxRep > 0 {
			var reps hybrid
			if data, err = splitV1Levels(data, parquet.Encoding(h.repEncoding), int(h.numValues), levelBitWidth(c.maxRep), &reps, &g.legacy); err != nil {
				return fmt.Errorf("repetition levels: %w", err)
			}
		}
		if c.maxDef > 0 {
			if data, err = splitV1Levels(data, parquet.Encoding(h.defEncoding), int(h.numValues), levelBitWidth(c.maxDef), &defs, &g.legacy); err != nil {
				return fmt.Errorf("definition levels: %w", err)
			}
		}
		return g.checkValues(c, h, &defs, data, *dict)
	case pageTypeDataV2:
		if !h.hasDataV2 {
			return errors.New("corrupt page header (a data page v2 without its header)")
		}
		if h.numValues < 0 {
			return fmt.Errorf("a page of %d values", h.numValues)
		}
		levels := int64(h.defBytes) + int64(h.repBytes)
		if h.defBytes < 0 || h.repBytes < 0 || levels > unc {
			return fmt.Errorf("levels of %d+%d bytes in a page of %d", h.repBytes, h.defBytes, unc)
		}
		if !h.isCompressed {
			if unc > left {
				return fmt.Errorf("a page of %d bytes where the column chunk has %d left", unc, left)
			}
		} else {
			if comp > left {
				return fmt.Errorf("a page of %d bytes where the column chunk has %d left", comp, left)
			}
			if levels > comp {
				return fmt.Errorf("levels of %d bytes in a page of %d compressed", levels, comp)
			}
			if err := g.checkCodec(c, pos+levels, comp-levels, unc-levels); err != nil {
				return err
			}
		}
		if !c.decoded || !decodersAllocate(c.phys, parquet.Encoding(h.encoding)) {
			return nil
		}
		var data []byte
		var err error
		if h.isCompressed {
			data, err = g.decompress(c, pos, comp, unc, levels)
		} else {
			data, err = g.readBody(c, pos, unc)
		}
		if err != nil {
			return err
		}
		var defs hybrid
		defs.reset(data[h.repBytes:levels], levelBitWidth(c.maxDef))
		return g.checkValues(c, h, &defs, data[levels:], *dict)
	default:
		// Other pages are skipped, but arrow-go allocates their size.
		if comp > left {
			return fmt.Errorf("a page of %d bytes where the column chunk has %d left", comp, left)
		}
		return g.checkCodec(c, pos, comp, unc)
	}
}

// plainBits is the fewest bits a PLAIN value of physical type phys takes.
func plainBits(phys parquet.Type, typeLen int) int64 {
	switch phys {
	case parquet.Types.Boolean:
		return 1
	case parquet.Types.ByteArray:
		return 32 // its length
	case parquet.Types.FixedLenByteArray:
		return 8 * int64(max(typeLen, 1))
	}
	return 8 * int64(phys.ByteSize())
}

// decodersAllocate says whether arrow-go's decoders of values of encoding
// enc allocate from what the page holds.
func decodersAllocate(phys parquet.Type, enc parquet.Encoding) bool {
	switch enc {
	case parquet.Encodings.PlainDict, parquet.Encodings.RLEDict:
		// Those of BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY allocate up to the
		// largest index; those of every type read past the end of a short
		// index stream, into whatever the buffer held before (and looped
		// forever on some corrupt files), so every index stream is checked.
		return true
	case parquet.Encodings.DeltaBinaryPacked, parquet.Encodings.DeltaLengthByteArray, parquet.Encodings.DeltaByteArray:
		return true
	}
	return false
}

// checkCodec checks that comp compressed bytes at pos can decode to unc
// bytes, and that the decoder allocates no more.
func (g *pageGuard) checkCodec(c *guardChunk, pos, comp, unc int64) error {
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
func (g *pageGuard) checkZstd(c *guardChunk, pos, comp, unc int64) error {
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

// readBody reads n bytes of the chunk at pos.
func (g *pageGuard) readBody(c *guardChunk, pos, n int64) ([]byte, error) {
	g.body = grow(g.body, int(n))
	if err := readFull(c.f, g.body, pos); err != nil {
		return nil, err
	}
	return g.body, nil
}

// decompress returns the unc bytes of a page whose comp bytes at pos are
// levels bytes as they are, then compressed ones.
func (g *pageGuard) decompress(c *guardChunk, pos, comp, unc, levels int64) (out []byte, err error) {
	codec, err := compress.GetCodec(c.codec)
	if err != nil {
		return nil, err
	}
	src, err := g.readBody(c, pos, comp)
	if err != nil {
		return nil, err
	}
	g.out = grow(g.out, int(unc))
	copy(g.out, src[:levels])
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt %s page (%v)", c.codec, p)
		}
	}()
	dec := codec.Decode(g.out[levels:], src[levels:])
	if int64(len(dec)) != unc-levels {
		return nil, fmt.Errorf("a page said to hold %d bytes decompresses to %d", unc, levels+int64(len(dec)))
	}
	if len(dec) > 0 && &dec[0] != &g.out[levels] {
		copy(g.out[levels:], dec)
	}
	return g.out, nil
}

// checkValues checks the values of a data page whose definition levels
// defs decodes (when the column has some) for what arrow-go's decoders
// allocate from them; dict is the number of dictionary values (-1: no
// dictionary page).
func (g *pageGuard) checkValues(c *guardChunk, h *pageHeader, defs *hybrid, vals []byte, dict int64) error {
	n := int(h.numValues)
	switch enc := parquet.Encoding(h.encoding); enc {
	case parquet.Encodings.PlainDict, parquet.Encodings.RLEDict:
		if dict < 0 {
			return errors.New("dictionary-encoded without a dictionary page")
		}
		if len(vals) == 0 {
			return nil // no values (or arrow-go finds none)
		}
		w := int(vals[0])
		if w > 32 {
			return fmt.Errorf("dictionary indices of %d bits", w)
		}
		// Every index must be there and in the dictionary: arrow-go reads
		// a short stream past its end, and allocates an entry per index up
		// to the largest for strings and binaries.
		k := n // the values that are there
		if c.maxDef > 0 {
			var err error
			if k, err = defs.count(c.maxDef, n); err != nil {
				return fmt.Errorf("definition levels: %w", err)
			}
		}
		var ix hybrid
		ix.reset(vals[1:], w)
		if g.idx == nil {
			g.idx = make([]int32, pageWindow)
		}
		for done := 0; done < k; done += len(g.idx) {
			if err := ix.indices(int(dict), g.idx[:min(len(g.idx), k-done)]); err != nil {
				return fmt.Errorf("dictionary indices: %w", err)
			}
		}
	case parquet.Encodings.DeltaBinaryPacked:
		if _, _, _, _, err := deltaHeader(vals); err != nil {
			return err
		}
	case parquet.Encodings.DeltaLengthByteArray:
		return checkDeltaLengths(c, vals, n)
	case parquet.Encodings.DeltaByteArray:
		// arrow-go allocates a prefix length per value of the page, decodes
		// that many, then reads the suffixes as DELTA_LENGTH_BYTE_ARRAY.
		if err := checkBudget(c, n); err != nil {
			return err
		}
		used, err := deltaSkip(vals, uint64(n))
		if err != nil {
			return fmt.Errorf("prefix lengths: %w", err)
		}
		return checkDeltaLengths(c, vals[used:], n)
	}
	return nil
}

// checkBudget checks an allocation of 4 bytes per value of n against the
// decode budget.
func checkBudget(c *guardChunk, n int) error {
	if budget := max(c.budget, minDecodeBudget); 4*int64(n) > budget {
		return fmt.Errorf("a DELTA_* page of %d values (at most %d are read)", n, budget/4)
	}
	return nil
}

// checkDeltaLengths checks the lengths of DELTA_LENGTH_BYTE_ARRAY values
// of a page of n values: arrow-go allocates one per value its header
// declares.
func checkDeltaLengths(c *guardChunk, vals []byte, n int) error {
	_, _, total, _, err := deltaHeader(vals)
	if err != nil {
		return fmt.Errorf("lengths: %w", err)
	}
	if total > uint64(n) {
		return fmt.Errorf("%d lengths in a page of %d values", total, n)
	}
	return checkBudget(c, int(total))
}

// deltaHeader decodes the header of DELTA_BINARY_PACKED values: its block
// size, miniblocks per block and values, and its length; the block
// geometry is the format's.
func deltaHeader(b []byte) (block, minis, total uint64, n int, err error) {
	var vals [4]uint64
	for i := range vals {
		v, k := binary.Uvarint(b[n:])
		if k <= 0 {
			return 0, 0, 0, 0, errors.New("corrupt DELTA_BINARY_PACKED header")
		}
		vals[i], n = v, n+k
	}
	block, minis, total = vals[0], vals[1], vals[2]
	if block == 0 || block%128 != 0 || block > maxDeltaBlock || minis == 0 || block%minis != 0 || block/minis%32 != 0 {
		return 0, 0, 0, 0, fmt.Errorf("DELTA_BINARY_PACKED blocks of %d values in %d miniblocks", block, minis)
	}
	return block, minis, total, n, nil
}

// deltaSkip returns the bytes that arrow-go's DELTA_BINARY_PACKED decoder
// reads to decode want values of b (as many as there are, if fewer): the
// header, then the blocks, each a min delta, the bit widths of its
// miniblocks and the miniblocks needed.
func deltaSkip(b []byte, want uint64) (int, error) {
	block, minis, total, n, err := deltaHeader(b)
	if err != nil {
		return 0, err
	}
	per := block / minis
	left := min(want, total)
	if left > 0 {
		left-- // the first value is in the header
	}
	for left > 0 {
		_, k := binary.Uvarint(b[n:])
		if k <= 0 || uint64(len(b)-n-k) < minis {
			return 0, errShortRuns
		}
		widths := b[n+k : n+k+int(minis)]
		n += k + int(minis)
		for _, w := range widths {
			if left == 0 {
				break
			}
			if w > 64 {
				return 0, fmt.Errorf("a miniblock of %d-bit values", w)
			}
			if size := per * uint64(w) / 8; size > uint64(len(b)-n) {
				return 0, errShortRuns
			} else {
				n += int(size)
			}
			left -= min(left, per)
		}
	}
	return n, nil
}
