package column

import (
	"errors"
	"fmt"
)

// Pages is one column's Parquet column chunks as the file stores them, their
// data pages still encoded and compressed, for a backend that decodes pages
// itself (the GPU's page kernels). Like a View it is the physical layout of
// a column, and names no Arrow version; unlike a View, its values are not
// yet values.
//
// The scope is that of the page kernels: flat columns of 4- and 8-byte
// integers and floats (Kind Int32, Int64, Uint32, Uint64, Float32 or
// Float64; the temporal types are their integers) and of decimals stored
// as INT32 or INT64 (Kind Decimal32 or Decimal64: their unscaled values,
// whatever the column's decimal type, folded into a decimal state) and of
// booleans (Kind Bool), definition levels of a flat optional column or
// none, data pages v1 and v2, values PLAIN or dictionary indices (booleans:
// PLAIN or RLE), bodies uncompressed or snappy.
type Pages struct {
	Type Type // the column's logical type, for messages
	Kind Kind
	// Nullable: the pages have definition levels, those of a flat optional
	// column (maximum level 1); else none.
	Nullable bool
	// Data holds the chunks: Chunks are byte ranges of it (the whole
	// mapped file, say), Pages point into those.
	Data   []byte
	Chunks []Span
	Pages  []Page
	// Dicts are the chunks' dictionaries, PLAIN values of Kind, one per
	// span of Chunks (nil for a chunk without one).
	Dicts [][]byte
	// Rows is the pages' rows (their levels), all together.
	Rows int64
}

// PageKind says whether Pages may be of kind k.
func PageKind(k Kind) bool {
	switch k {
	case Int32, Int64, Uint32, Uint64, Float32, Float64, Decimal32, Decimal64, Bool:
		return true
	}
	return false
}

// Span is a byte range.
type Span struct{ Off, Len int64 }

// Page is a data page of Pages.
type Page struct {
	Chunk  int   // the Chunks span it lies in
	Offset int64 // where its stored bytes start in Data (right after its header)
	Stored int   // its stored bytes (the page header's compressed size; v2: the levels included)
	Body   int   // the bytes of its body decompressed (v1: levels and values; v2: values)
	Rows   int   // its num_values: its definition levels
	// Levels and DefLevels are a v2 page's bytes of levels (repetition,
	// then definition), stored before its body and never compressed, and
	// the definition levels' part of them; 0 for v1.
	Levels, DefLevels int
	V2                bool
	Snappy            bool // the body is snappy-compressed (else stored as it is)
	Dictionary        bool // its values are dictionary indices (else PLAIN)
	// RLE: its values are booleans RLE-encoded, a 4-byte length then the
	// RLE/bit-packed hybrid of bit width 1 (else PLAIN, bit-packed).
	RLE bool
	// Dictionary pages read their chunk's dictionary, Dicts[Chunk].
	// RowGroup and Index place it in the file, for messages.
	RowGroup, Index int
}

// Check checks that the pages lie in their spans and the spans in Data, and
// that the sizes agree: what a backend relies on to read no byte outside
// them.
func (p *Pages) Check() error {
	if !PageKind(p.Kind) {
		return fmt.Errorf("pages of kind %s: not a kind of the page kernels", p.Kind)
	}
	w := int64(p.Kind.Width())
	if len(p.Dicts) != len(p.Chunks) {
		return fmt.Errorf("%d dictionaries for %d chunks", len(p.Dicts), len(p.Chunks))
	}
	for i, d := range p.Dicts {
		if w == 0 && len(d) != 0 {
			return fmt.Errorf("chunk %d: a dictionary of %s", i, p.Kind)
		}
		if w != 0 && (int64(len(d))%w != 0 || int64(len(d))/w > 1<<31-1) {
			return fmt.Errorf("chunk %d: a dictionary of %d bytes for values of %d", i, len(d), w)
		}
	}
	for i, s := range p.Chunks {
		if s.Off < 0 || s.Len < 0 || s.Off > int64(len(p.Data))-s.Len {
			return fmt.Errorf("chunk %d at [%d, +%d) outside %d bytes", i, s.Off, s.Len, len(p.Data))
		}
		if i > 0 && s.Off < p.Chunks[i-1].Off+p.Chunks[i-1].Len {
			return fmt.Errorf("chunk %d overlaps chunk %d", i, i-1)
		}
	}
	var rows int64
	for i := range p.Pages {
		pg := &p.Pages[i]
		if i > 0 && pg.Chunk < p.Pages[i-1].Chunk {
			return fmt.Errorf("row group %d: page %d: in chunk %d after a page of chunk %d", pg.RowGroup, pg.Index, pg.Chunk, p.Pages[i-1].Chunk)
		}
		if err := p.checkPage(pg); err != nil {
			return fmt.Errorf("row group %d: page %d: %w", pg.RowGroup, pg.Index, err)
		}
		rows += int64(pg.Rows)
	}
	if rows != p.Rows {
		return fmt.Errorf("pages of %d rows, not %d", rows, p.Rows)
	}
	return nil
}

// errPageSizes is wrapped by Check's complaints about a page's sizes.
var errPageSizes = errors.New("page sizes disagree")

func (p *Pages) checkPage(pg *Page) error {
	if pg.Chunk < 0 || pg.Chunk >= len(p.Chunks) {
		return fmt.Errorf("in chunk %d of %d", pg.Chunk, len(p.Chunks))
	}
	s := p.Chunks[pg.Chunk]
	if pg.Stored < 0 || pg.Body < 0 || pg.Rows < 0 || pg.Offset < s.Off || pg.Offset-s.Off > s.Len-int64(pg.Stored) {
		return fmt.Errorf("%w: %d bytes at %d, outside its chunk [%d, +%d)", errPageSizes, pg.Stored, pg.Offset, s.Off, s.Len)
	}
	if pg.Levels < 0 || pg.DefLevels < 0 || pg.DefLevels > pg.Levels || pg.Levels > pg.Stored ||
		(!pg.V2 && pg.Levels != 0) {
		return fmt.Errorf("%w: %d bytes of levels (%d definition) in %d", errPageSizes, pg.Levels, pg.DefLevels, pg.Stored)
	}
	if pg.RLE && p.Kind != Bool {
		return fmt.Errorf("RLE values of kind %s", p.Kind)
	}
	if pg.Dictionary && p.Kind == Bool {
		return errors.New("dictionary indices of booleans")
	}
	if !pg.Snappy && pg.Body != pg.Stored-pg.Levels {
		return fmt.Errorf("%w: an uncompressed body of %d bytes stored in %d", errPageSizes, pg.Body, pg.Stored-pg.Levels)
	}
	if pg.Body > 1<<31-1 || pg.Stored > 1<<31-1 || pg.Rows > 1<<31-1 {
		return fmt.Errorf("%w: %d bytes, %d rows", errPageSizes, pg.Body, pg.Rows)
	}
	return nil
}
