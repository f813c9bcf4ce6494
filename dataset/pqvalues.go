package dataset

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/apache/arrow/go/v17/parquet"
)

// The guard's checks of the values of the pages that arrow-go's decoders
// read: what those decoders allocate from the page's content (dictionary
// indices, DELTA_* headers and lengths) stays within what the page and the
// decode budget justify.

// maxDeltaBlock is the most values a DELTA_BINARY_PACKED block may declare
// (writers use 128 to a few thousand): arrow-go allocates a miniblock of
// them.
const maxDeltaBlock = 1 << 20

// minDecodeBudget is the least decode budget the counts of DELTA_* pages
// are checked against.
const minDecodeBudget = arrowTaskBytes

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

// dictEntryBytes is the memory arrow-go's decoders take per entry of a
// dictionary of physical type phys. When a chunk's dictionary page is read,
// its decoder (encoding.NewDictConverter) makes a slice of the page's
// number of entries, of parquet.ByteArray and parquet.FixedLenByteArray
// slices for BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY (24 bytes each), of the
// values for the others; the first index past those decoded so far then
// decodes the entries up to it into a second slice of as many, appended to
// the first: twice the entry in all. A BYTE_ARRAY dictionary read as an
// Arrow dictionary also gets an offset (4 bytes) and an entry of the
// builder's memo table (about 12) per value.
func dictEntryBytes(phys parquet.Type, typeLen int) int64 {
	switch phys {
	case parquet.Types.ByteArray:
		return 2*24 + 16
	case parquet.Types.FixedLenByteArray:
		return 2 * 24
	case parquet.Types.Boolean:
		return 2
	}
	return 2 * int64(phys.ByteSize())
}

// checkDictCost checks what arrow-go's decoders take to decode a dictionary
// page of n entries and unc bytes of chunk c, the page and its entries,
// against MaxChunkDecodeBytes.
func checkDictCost(c *guardChunk, n, unc int64) error {
	per := dictEntryBytes(c.phys, c.typeLen)
	need := unc + n*per
	if need > MaxChunkDecodeBytes {
		return limitError(fmt.Sprintf("memory to decode a dictionary of %d %s entries (%d bytes each, and the page's %d bytes)", n, c.phys, per, unc),
			need, "MaxChunkDecodeBytes", MaxChunkDecodeBytes)
	}
	c.dictCost = need
	return nil
}
