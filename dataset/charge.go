package dataset

import "github.com/arrowagg/arrowagg/budget"

// What is charged to the memory budget (Options.Budget), and where:
//
//   - Open pins each Parquet footer, at footerMemory times its bytes, until
//     Close.
//   - A Parquet column chunk is a unit of work (budget.Run: run again from
//     its start when memory is short): the buffers its walk and its page
//     path grow past keepBytes (pages read when the file is not mapped,
//     pages decompressed, the dictionary page copied, the levels of a page read as a stream, the window of a
//     zstd stream: pqstream.go), and, for a chunk that pqarrow decodes, what arrow-go
//     holds for it (arrowTaskCost: arrowTaskBytes, less for a small chunk of
//     fixed-width values; its largest page twice: read and
//     decompressed, and its dictionary as the decoders hold it; for an
//     encrypted chunk, twice its bytes more: read whole and its page
//     headers unpadded, pqpadded.go).
//   - The plan of a Parquet file's GPU page route, planChunkBytes for each
//     column chunk of the selected leaves, while it is made (planGPU).
//   - An IPC file's record batches are charged, in file order, with what
//     decoding them allocates (compressed buffers decompressed, misaligned
//     ones copied, the whole body when the file is not mapped, the bitmaps
//     that the views of null, run-end encoded and union columns make: a bit
//     a row, arrow17.OwnsValidity), from before
//     they are decoded until their states are merged; dictionaries alike,
//     while they are in use.
//   - An IPC stream (standard input, or a file read through Arrow's reader)
//     charges what it buffers and what Arrow's reader allocates, while it is
//     alive.
//
// Buffers of keepBytes or less are not charged: a worker keeps them from
// chunk to chunk, a few per worker, part of the constant a read holds
// besides its budget.

// keepBytes is the largest buffer a worker keeps between column chunks,
// uncharged.
const keepBytes = guardKeep

// growCharged returns b resized to n bytes, made anew when it is too small:
// a new buffer of more than keepBytes is charged to c, for what, and the
// old one it replaces given back to the unit.
func growCharged(c *budget.Charge, what string, b []byte, n int) ([]byte, error) {
	if cap(b) >= n {
		return b[:n], nil
	}
	if n > keepBytes {
		if err := c.Grow(what, int64(n)); err != nil {
			return b[:0], err
		}
	}
	if cap(b) > keepBytes {
		c.Shrink(int64(cap(b)))
	}
	return make([]byte, n), nil
}

// dropCharged returns b, or nil when it is larger than keepBytes (given back
// to c): the buffers of a unit of work that a worker does not keep.
func dropCharged(c *budget.Charge, b []byte) []byte {
	if cap(b) > keepBytes {
		c.Shrink(int64(cap(b)))
		return nil
	}
	return b
}
