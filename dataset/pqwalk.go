package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/metadata"

	"github.com/arrowagg/arrowagg/budget"
)

// arrow-go allocates whatever sizes and counts a file declares, before it
// reads the bytes that would back them: the page reader a buffer of the
// uncompressed_page_size of each page header (up to 2 GiB) and one of its
// compressed_page_size, the zstd decoder one of the content size of each
// frame header (up to 64 GiB), the decoders of BYTE_ARRAY and
// FIXED_LEN_BYTE_ARRAY dictionaries 24 bytes per entry up to the largest
// index of a batch (indices of up to 32 bits), those of DELTA_* pages 4
// bytes per value declared and a buffer of each block's declared size. A
// corrupt file can thus make it allocate gigabytes, which Go does not
// survive. So every column chunk is read by a walk over its pages
// (pageGuard.next), as arrow-go's page reader reads them, which checks every
// size and count against what the file justifies:
//
//   - a page's compressed bytes lie inside the column chunk, and its
//     uncompressed size is what those bytes can decode to: equal for
//     UNCOMPRESSED, the length SNAPPY stores in front, at most 1032 times
//     the bytes for GZIP (deflate's largest ratio), at most what the blocks
//     of the ZSTD frames can hold, whose content sizes add up to no more;
//     at most 255 times the bytes (and 255) for LZ4 and LZ4_RAW (pqlz4.go),
//     whose blocks decode into the page's buffer;
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
// The walk is the only reader of page headers. A chunk that arrow-go's
// decoders read (through pqarrow) is walked to its end (pageGuard.check)
// before arrow-go reads it. A chunk of the page path is read page by page
// from what the walk records of each page (a chunkPage, right after the page
// was checked): the page path reads and decompresses the page's bytes
// itself, into buffers of the page's checked size, and parses no header.
//
// The pages that need no decompression cost one small read each, of their
// header (the page path reads the bytes of the next header with those of
// a page); those decompressed by the walk are the dictionary-encoded pages
// of the columns arrow-go decodes (the page path decodes the others
// itself), whose indices cost little next to the values decoding them
// builds, and the rarer DELTA_* pages.

// maxPageBytes caps the uncompressed size of any page.
const maxPageBytes = 1 << 30

// maxPageHeaderBytes is the largest page header arrow-go's page reader
// reads (its default limit).
const maxPageHeaderBytes = 4 << 20

// headerAhead is how many bytes past those asked for a read of the walk
// takes along: the next page header, or the start of one.
const headerAhead = 1 << 10

// guardChunkOf returns column chunk cc, of Parquet leaf column col, as the
// walk reads it (decoded: arrow-go's decoders read its values), and false
// for an encrypted chunk, whose page headers arrow-go cannot read without
// keys: those are left to it.
func (r *parquetRun) guardChunkOf(f io.ReaderAt, size int64, cc *metadata.ColumnChunkMetaData, col int, decoded bool) (guardChunk, bool, error) {
	if cc.CryptoMetadata() != nil {
		return guardChunk{}, false, nil
	}
	off, n, err := chunkRange(r.pqf.meta, cc, size)
	if err != nil {
		return guardChunk{}, false, err
	}
	descr := r.pqf.meta.Schema.Column(col)
	if l := max(descr.MaxDefinitionLevel(), descr.MaxRepetitionLevel()); l > MaxLevel || l < 0 {
		return guardChunk{}, false, limitError("definition or repetition level", int64(l), "MaxLevel", MaxLevel)
	}
	return guardChunk{
		f: f, mapped: r.mapped, off: off, end: off + n, values: cc.NumValues(), codec: cc.Compression(),
		phys: descr.PhysicalType(), typeLen: descr.TypeLength(), maxDef: descr.MaxDefinitionLevel(), maxRep: descr.MaxRepetitionLevel(),
		decoded: decoded, budget: r.decodeBytes,
	}, true, nil
}

// guard checks the pages of column chunk cc, of Parquet leaf column col,
// before arrow-go reads them (decoded: through its decoders), and returns
// the largest uncompressed page (maxPageBytes for an encrypted chunk, left
// to arrow-go).
func (r *parquetRun) guard(ctx context.Context, g *pageGuard, f io.ReaderAt, size int64, cc *metadata.ColumnChunkMetaData, col int, decoded bool) (int64, error) {
	c, ok, err := r.guardChunkOf(f, size, cc, col, decoded)
	if err != nil || !ok {
		return maxPageBytes, err
	}
	return g.check(ctx, &c)
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

// guardChunk is a column chunk as the guard checks it.
type guardChunk struct {
	f io.ReaderAt
	// mapped is the whole file mapped into memory, from which pages are
	// read in place (mapped.go); nil: they are read from f.
	mapped   []byte
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
	// pageIndices (with decoded): the indices of dictionary-encoded data
	// pages are not checked, as the page path, which checks them as it
	// decodes them, reads them unless a page of the chunk is not
	// dictionary-encoded (chunkWalk.undict; its chunk is then walked
	// again without it).
	pageIndices bool
	// budget bounds what arrow-go allocates per value of a DELTA_* page.
	budget int64
	// charge is the memory budget's charge of the chunk's task: the
	// walk's large buffers are charged to it (charge.go).
	charge *budget.Charge
	// dictCost is what arrow-go's decoders hold for the dictionary of a
	// decoded chunk (checkDictCost), once the walk met it.
	dictCost int64
}

// chunkPage is what the walk records of a page it checked: its header, as
// parsePageHeader decoded it, and where its bytes are. The page path reads
// the page from it.
type chunkPage struct {
	pageHeader
	at    int64 // the file offset of the page's bytes (right after its header)
	index int   // the page's place in the chunk (0: the chunk's first header)
}

// chunkWalk is where a walk over the pages of a chunk stands.
type chunkWalk struct {
	c       *guardChunk
	pos     int64 // the next page header
	index   int   // the next page's place in the chunk
	seen    int64 // values of the data pages so far
	dict    int64 // values of the dictionary page; -1: none yet
	largest int64 // the largest uncompressed page so far
	// allNull: every data page so far holds nulls only, in fewer bytes
	// than a bit per value (see nullPage).
	allNull bool
	// undict: a data page so far is not dictionary-encoded; dictBytes:
	// the dictionary page's uncompressed bytes.
	undict    bool
	dictBytes int64
	done      bool
	page      chunkPage // the last page walked
}

// pageGuard walks column chunks; a worker reuses it chunk after chunk.
type pageGuard struct {
	walk   chunkWalk
	win    []byte // bytes of the file from winAt on
	winAt  int64
	body   []byte // a page's bytes
	out    []byte // a page's decompressed bytes
	idx    []int32
	legacy []byte
	zstd   zstdDecoder // decodes the zstd pages of the walk and of the page path
	// streams decode the large pages of the walk and of the page path
	// (pqstream.go).
	streams streamDecoders
	// zstdWindow is the largest window of the zstd frames of the page
	// checked last (checkZstd).
	zstdWindow int64
	// allNull says whether the chunk that check walked last is all nulls
	// (nullPage): no decoder need read it.
	allNull bool
	// starts are, when recordStarts, the first rows (values) of the data
	// pages of the chunk walked (pageindex.go).
	starts       []int64
	recordStarts bool
}

// guardKeep is the largest buffer a pageGuard keeps between chunks.
const guardKeep = 4 << 20

// at returns up to n bytes of the chunk from pos on (fewer at its end),
// reading the file when they are not buffered.
func (g *pageGuard) at(c *guardChunk, pos int64, n int) ([]byte, error) {
	return g.ahead(c, pos, n, 0)
}

// ahead is at, reading up to extra bytes more when it reads the file (and
// at least 512 in all): a page header and what follows it, or a page and
// the next header.
func (g *pageGuard) ahead(c *guardChunk, pos int64, n, extra int) ([]byte, error) {
	n = int(min(int64(n), c.end-pos))
	if n <= 0 {
		return nil, nil
	}
	if c.mapped != nil && pos >= 0 && pos+int64(n) <= int64(len(c.mapped)) {
		return c.mapped[pos : pos+int64(n) : pos+int64(n)], nil
	}
	if pos >= g.winAt && pos+int64(n) <= g.winAt+int64(len(g.win)) {
		return g.win[pos-g.winAt : pos-g.winAt+int64(n)], nil
	}
	m := int(min(int64(max(n+extra, 512)), c.end-pos))
	var err error
	if g.win, err = growCharged(c.charge, "a page read", g.win, m); err != nil {
		return nil, err
	}
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

// begin starts a walk over the pages of chunk c; end it with end.
func (g *pageGuard) begin(c *guardChunk) {
	g.walk = chunkWalk{c: c, pos: c.off, dict: -1, allNull: c.decoded && c.maxRep == 0 && c.maxDef > 0}
	g.starts = g.starts[:0]
	g.win = g.win[:0] // (the last chunk's bytes, maybe of another file)
}

// end ends a walk: the buffers a large page grew are dropped.
func (g *pageGuard) end() {
	c := g.walk.c.charge
	g.body = dropCharged(c, g.body)
	g.out = dropCharged(c, g.out)
	g.win = dropCharged(c, g.win)[:0]
	g.streams.release()
	g.walk.c = nil
}

// next reads the header of the next page of the walk, as arrow-go's page
// reader would, checks the page and returns what it recorded of it (valid
// until the next call); nil once the walk is done. The walk is done when
// the data pages hold the chunk's values, or at the end of the chunk's bytes
// (where arrow-go's reader stops: its user says what is missing).
func (g *pageGuard) next(ctx context.Context) (*chunkPage, error) {
	w := &g.walk
	c := w.c
	if w.done || w.seen >= c.values || w.pos >= c.end {
		w.done = true
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	index := w.index
	h, n, err := g.header(c, w.pos)
	if err != nil {
		return nil, fmt.Errorf("page %d: %w", index, err)
	}
	at := w.pos + int64(n)
	if err := g.checkPage(ctx, c, index, &h, at, &w.dict); err != nil {
		return nil, fmt.Errorf("page %d: %w", index, err)
	}
	w.largest = max(w.largest, int64(h.uncompressed))
	if w.allNull && (h.typ == pageTypeData || h.typ == pageTypeDataV2) {
		if w.allNull, err = g.nullPage(ctx, c, &h, at); err != nil {
			return nil, fmt.Errorf("page %d: %w", index, err)
		}
	}
	w.pos = at
	switch {
	case h.typ == pageTypeDataV2 && !h.isCompressed:
		w.pos += int64(h.uncompressed) // arrow-go reads that many bytes
	case h.typ == pageTypeData || h.typ == pageTypeDict || h.typ == pageTypeDataV2:
		w.pos += int64(h.compressed)
	default:
		// arrow-go skips a page of another type without moving past
		// its bytes: the next header it reads is there.
	}
	if h.typ == pageTypeData || h.typ == pageTypeDataV2 {
		if g.recordStarts {
			g.starts = append(g.starts, w.seen)
		}
		w.seen += int64(h.numValues)
		if !dictEncoded(parquet.Encoding(h.encoding)) && h.numValues > 0 {
			w.undict = true
		}
	}
	if h.typ == pageTypeDict {
		w.dictBytes = int64(h.uncompressed)
	}
	w.index++
	w.page = chunkPage{pageHeader: h, at: at, index: index}
	return &w.page, nil
}

// dictEncoded reports whether a data page of encoding enc holds dictionary
// indices.
func dictEncoded(enc parquet.Encoding) bool {
	return enc == parquet.Encodings.PlainDict || enc == parquet.Encodings.RLEDict
}

// check walks the pages of chunk c to its end, checking them, and returns
// the largest uncompressed page size.
func (g *pageGuard) check(ctx context.Context, c *guardChunk) (largest int64, err error) {
	g.allNull = false
	g.begin(c)
	defer g.end()
	for {
		p, err := g.next(ctx)
		if err != nil {
			return 0, err
		}
		if p == nil {
			g.allNull = g.walk.allNull && g.walk.seen == c.values
			return g.walk.largest, nil
		}
	}
}

// pageBytes returns the n bytes of the chunk at pos (a page walked), read
// along with the next page header: valid until the walk goes on.
func (g *pageGuard) pageBytes(pos, n int64) ([]byte, error) {
	c := g.walk.c
	if n > c.end-pos {
		return nil, fmt.Errorf("a page of %d bytes where the column chunk has %d left", n, c.end-pos)
	}
	return g.ahead(c, pos, int(n), headerAhead)
}

// checkPage checks the page of header h whose bytes start at pos.
func (g *pageGuard) checkPage(ctx context.Context, c *guardChunk, page int, h *pageHeader, pos int64, dict *int64) error {
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
		if c.decoded {
			if err := checkDictCost(c, nv, unc); err != nil {
				return err
			}
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
		if err := checkDecodable(c, h); err != nil {
			return err
		}
		if !c.decoded || !decodersAllocate(c.phys, parquet.Encoding(h.encoding)) || c.pageIndices && dictEncoded(parquet.Encoding(h.encoding)) {
			return nil
		}
		data, err := g.decompress(ctx, c, pos, comp, unc, 0)
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
		if err := checkDecodable(c, h); err != nil {
			return err
		}
		if !c.decoded || !decodersAllocate(c.phys, parquet.Encoding(h.encoding)) || c.pageIndices && dictEncoded(parquet.Encoding(h.encoding)) {
			return nil
		}
		var data []byte
		var err error
		if h.isCompressed {
			data, err = g.decompress(ctx, c, pos, comp, unc, levels)
		} else {
			data, err = g.readBody(c, pos, unc, true)
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

// checkDecodable refuses a data page of header h that arrow-go's decoders
// cannot decode, in a chunk they read (c.decoded): BYTE_STREAM_SPLIT, which
// arrow-go v17 has no decoder for (its record reader then reads no rows and
// says nothing), and the other encodings of the format it has no decoder
// for in a column of the chunk's physical type (its decoder would panic,
// which would read as corrupt bytes). The page path decodes
// BYTE_STREAM_SPLIT for flat FLOAT, DOUBLE, INT32, INT64 and
// FIXED_LEN_BYTE_ARRAY columns (pages.go). An encoding the format does not
// define is left to the decoder (corrupt).
func checkDecodable(c *guardChunk, h *pageHeader) error {
	if !c.decoded {
		return nil
	}
	e := parquet.Encoding(h.encoding)
	if e == encByteStreamSplit {
		return fmt.Errorf("%w: BYTE_STREAM_SPLIT encoding of a %s column read through arrow-go (only flat FLOAT, DOUBLE, INT32, INT64 and FIXED_LEN_BYTE_ARRAY columns are decoded)", arrow.ErrNotImplemented, c.phys)
	}
	if e >= 0 && e < encByteStreamSplit && !arrowDecodes(c.phys, e) {
		return fmt.Errorf("%w: %s encoding of a %s column (arrow-go v17 has no decoder for it)", arrow.ErrNotImplemented, e, c.phys)
	}
	return nil
}

// arrowDecodes reports whether arrow-go v17 has a decoder for the data
// pages of encoding e (one the format defines, but BYTE_STREAM_SPLIT) in a
// column of physical type phys (its encoding package's Decoder methods).
func arrowDecodes(phys parquet.Type, e parquet.Encoding) bool {
	switch e {
	case parquet.Encodings.Plain:
		return true
	case parquet.Encodings.PlainDict, parquet.Encodings.RLEDict:
		return phys != parquet.Types.Boolean
	case parquet.Encodings.RLE:
		return phys == parquet.Types.Boolean
	case parquet.Encodings.DeltaBinaryPacked:
		return phys == parquet.Types.Int32 || phys == parquet.Types.Int64
	case parquet.Encodings.DeltaLengthByteArray, parquet.Encodings.DeltaByteArray:
		return phys == parquet.Types.ByteArray
	}
	return false // BIT_PACKED: levels only
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

// nullPageValues is the fewest values of a page that nullPage looks at:
// fewer cost the decoders milliseconds (and writers cut pages at some
// thousands of rows).
const nullPageValues = 1 << 20

// nullPage says whether the data page of header h, whose bytes start at
// pos, of a chunk of arrow-go's decoders (without repetition levels) holds
// nulls only, in fewer bytes than a bit per value. A writer puts a page of
// nulls in a few bytes of definition levels (one RLE run), for any number
// of values: 2^31-1 of them in a page of 6 bytes. Decoding such pages
// through pqarrow takes nanoseconds per value, minutes for a file of
// kilobytes; a chunk whose pages are all such pages is answered as nulls
// instead. Pages of fewer than nullPageValues values, or of a bit per value or more (all of those holding values,
// whatever their encoding) are left to the decoders: they cost in
// proportion to their bytes.
func (g *pageGuard) nullPage(ctx context.Context, c *guardChunk, h *pageHeader, pos int64) (bool, error) {
	n, unc, comp := int64(h.numValues), int64(h.uncompressed), int64(h.compressed)
	if n < nullPageValues || n <= 8*unc+64 {
		return false, nil
	}
	var defs hybrid
	if h.typ == pageTypeData {
		data, err := g.decompress(ctx, c, pos, comp, unc, 0)
		if err != nil {
			return false, err
		}
		if _, err := splitV1Levels(data, parquet.Encoding(h.defEncoding), int(n), levelBitWidth(c.maxDef), &defs, &g.legacy); err != nil {
			return false, fmt.Errorf("definition levels: %w", err)
		}
	} else {
		if h.repBytes != 0 || int64(h.defBytes) > unc || (h.isCompressed && int64(h.defBytes) > comp) {
			return false, nil
		}
		data, err := g.readBody(c, pos, int64(h.defBytes), true)
		if err != nil {
			return false, err
		}
		defs.reset(data, levelBitWidth(c.maxDef))
	}
	k, err := defs.count(c.maxDef, int(n))
	if err != nil {
		return false, fmt.Errorf("definition levels: %w", err)
	}
	return k == 0, nil
}
