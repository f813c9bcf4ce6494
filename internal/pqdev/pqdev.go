// Package pqdev lays out column.Pages for the Parquet page kernels
// (kernels/pq.cuh): the page table they read (PageDesc records), where each
// chunk lies in the device's chunk buffer and each snappy page's body in its
// scratch buffer, and the words of status they write. The CUDA backend
// uploads by it; the kernels' emulation (internal/emugpu) runs by it too, so
// the layout the tests check is the one the GPU reads.
package pqdev

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/kernels"
)

// Pad is the padding before and after the chunk and scratch buffers, and
// after each scratch slot: the kernels read the aligned 8-byte words that
// hold a value, which may reach that far past the page's bytes.
const Pad = kernels.AggPqPad

// PageBytes is the size of a page table record.
const PageBytes = kernels.AggPqPageBytes

// Layout is where Pages go on the device.
type Layout struct {
	// Table is the page table, a record per page, in order.
	Table []byte
	// DataBytes is the size of the chunk buffer (Pad, the chunks, each
	// from a 16-byte boundary, Pad); ChunkAt is where each chunk starts in
	// it, Pad included (the kernels' chunk pointer is the buffer's start
	// plus Pad: the table's offsets count from there).
	DataBytes int64
	ChunkAt   []int64
	// ScratchBytes is the size of the scratch buffer (the decompressed
	// bodies of the snappy pages, each in a 16-byte aligned slot followed
	// by Pad bytes; Pad before the first).
	ScratchBytes int64
	// Snappy is the number of snappy pages (0: no decompression launch).
	Snappy int
	// DictAt is where each chunk's dictionary starts in the dictionary
	// buffer, in bytes (the chunks' dictionaries one after the other);
	// DictBytes is their sum.
	DictAt    []int64
	DictBytes int64
}

// Bytes is the device memory of the buffers that l lays out: the chunks,
// the snappy bodies' scratch, the dictionaries and the page table.
func (l *Layout) Bytes() int64 {
	return l.DataBytes + l.ScratchBytes + l.DictBytes + int64(len(l.Table))
}

// Plan lays p out; p must pass Check.
func Plan(p *column.Pages) (Layout, error) {
	if err := p.Check(); err != nil {
		return Layout{}, err
	}
	l := Layout{Table: make([]byte, len(p.Pages)*PageBytes), ChunkAt: make([]int64, len(p.Chunks)),
		DictAt: make([]int64, len(p.Chunks))}
	at := int64(Pad)
	for i, s := range p.Chunks {
		l.ChunkAt[i] = at
		at = align16(at + s.Len)
		l.DictAt[i] = l.DictBytes
		l.DictBytes += int64(len(p.Dicts[i]))
	}
	w := int64(p.Kind.Width())
	l.DataBytes = at + Pad
	slot := int64(0)
	for i := range p.Pages {
		pg := &p.Pages[i]
		src := l.ChunkAt[pg.Chunk] - Pad + (pg.Offset - p.Chunks[pg.Chunk].Off)
		var dst uint64
		var flags uint32
		if pg.V2 {
			flags |= kernels.AggPqFlagV2
		}
		if pg.Dictionary {
			flags |= kernels.AggPqFlagDict
		}
		if pg.RLE {
			flags |= kernels.AggPqFlagRle
		}
		if pg.Snappy {
			flags |= kernels.AggPqFlagSnappy
			dst = uint64(slot)
			slot = align16(slot + int64(pg.Body) + Pad)
			l.Snappy++
		}
		r := l.Table[i*PageBytes : (i+1)*PageBytes]
		le := binary.LittleEndian
		le.PutUint64(r[0:], uint64(src))
		le.PutUint64(r[8:], dst)
		var ndict uint32
		if pg.Dictionary {
			le.PutUint64(r[16:], uint64(l.DictAt[pg.Chunk]/w))
			ndict = uint32(int64(len(p.Dicts[pg.Chunk])) / w)
		}
		le.PutUint32(r[24:], uint32(pg.Stored))
		le.PutUint32(r[28:], uint32(pg.Body))
		le.PutUint32(r[32:], uint32(pg.Rows))
		le.PutUint32(r[36:], ndict)
		le.PutUint32(r[40:], uint32(pg.Levels))
		le.PutUint32(r[44:], uint32(pg.DefLevels))
		le.PutUint32(r[48:], flags)
	}
	l.ScratchBytes = Pad + slot + Pad
	return l, nil
}

func align16(n int64) int64 { return (n + 15) &^ 15 }

// Fill copies the chunks of p into buf (DataBytes long) where the layout
// puts them, zeroing the padding, and its dictionaries into dict (DictBytes
// long).
func (l *Layout) Fill(p *column.Pages, buf, dict []byte) {
	clear(buf)
	for i, s := range p.Chunks {
		copy(buf[l.ChunkAt[i]:], p.Data[s.Off:s.Off+s.Len])
		copy(dict[l.DictAt[i]:], p.Dicts[i])
	}
}

// Move is a copy of Len bytes from offset From of a chunk buffer to offset
// To of another.
type Move struct{ From, To, Len int64 }

// Spread gives each page of p, as l lays it out, its own copy of its
// stored bytes, in a chunk buffer of dataBytes (padded as DataBytes is),
// each page's from a 16-byte boundary, in the pages' order: the moves copy
// them there from l's chunk buffer, and l's page table is rewritten to read
// them there. For pages that share their bytes (Sample's), so that the
// kernels read each from memory of its own, as they would a file's.
func (l *Layout) Spread(p *column.Pages) (moves []Move, dataBytes int64) {
	at := int64(0)
	for i := range p.Pages {
		pg := &p.Pages[i]
		from := l.ChunkAt[pg.Chunk] + (pg.Offset - p.Chunks[pg.Chunk].Off)
		moves = append(moves, Move{From: from, To: Pad + at, Len: int64(pg.Stored)})
		binary.LittleEndian.PutUint64(l.Table[i*PageBytes:], uint64(at))
		at = align16(at + int64(pg.Stored))
	}
	return moves, Pad + at + Pad
}

// StatusError turns the kernels' status words (one per page) into the error
// of the first page that has one, naming the page; nil when none has.
func StatusError(p *column.Pages, status []uint32) error {
	for i, s := range status {
		if s == 0 {
			continue
		}
		pg := &p.Pages[i]
		return fmt.Errorf("row group %d: page %d: %s", pg.RowGroup, pg.Index, statusText(s))
	}
	return nil
}

func statusText(s uint32) string {
	switch s {
	case kernels.AggPqErrSnappy:
		return "corrupt: the snappy stream is invalid"
	case kernels.AggPqErrSnappyLength:
		return "corrupt: the snappy stream's length is not the page header's uncompressed size"
	case kernels.AggPqErrLevels:
		return "corrupt: the definition levels are invalid or fewer than the page's values"
	case kernels.AggPqErrValues:
		return "corrupt: fewer values than the definition levels say"
	case kernels.AggPqErrBitWidth:
		return "corrupt: a dictionary index bit width above 32"
	case kernels.AggPqErrIndex:
		return "corrupt: a dictionary index outside the dictionary"
	case kernels.AggPqErrIndices:
		return "corrupt: the dictionary indices are invalid or fewer than the non-null values"
	case kernels.AggPqErrBools:
		return "corrupt: the RLE-encoded booleans are invalid or fewer than the non-null values"
	}
	return fmt.Sprintf("the page kernels' status %d", s)
}

// Batches cuts p into runs of whole chunks of at most limit stored bytes
// each (a chunk larger than limit is a run of its own), sharing p's Data, each
// with the part of p.Dict its pages read.
func Batches(p *column.Pages, limit int64) []*column.Pages {
	var out []*column.Pages
	first, pg := 0, 0
	for first < len(p.Chunks) || (first == 0 && len(out) == 0) {
		q := &column.Pages{Type: p.Type, Kind: p.Kind, Nullable: p.Nullable, Data: p.Data}
		var bytes int64
		last := first
		for last < len(p.Chunks) && (last == first || bytes+p.Chunks[last].Len <= limit) {
			bytes += p.Chunks[last].Len
			last++
		}
		q.Chunks = p.Chunks[first:last]
		start := pg
		for pg < len(p.Pages) && p.Pages[pg].Chunk < last {
			q.Rows += int64(p.Pages[pg].Rows)
			pg++
		}
		q.Pages = append([]column.Page(nil), p.Pages[start:pg]...)
		q.Dicts = p.Dicts[first:last]
		for i := range q.Pages {
			q.Pages[i].Chunk -= first
		}
		out = append(out, q)
		if last == first {
			break
		}
		first = last
	}
	return out
}

// Handles says whether the page kernels aggregate pages of kind k for a
// state that tracks tracks: the default aggregates (no ordered ones, no
// statistics).
func Handles(k column.Kind, tracks agg.Set) bool {
	return column.PageKind(k) && tracks&(agg.Ordered|agg.Moments|agg.ApproxDistinct) == 0
}

// Kernel is the name of the page kernel of kind k (kernels/pq.cuh).
func Kernel(k column.Kind) string { return "arrowagg_pq_" + kernelKinds[k] }

// kernelKinds names the page kernel of each kind: decimals stored as
// integers are folded as those integers (kernels.State makes their words a
// decimal state).
var kernelKinds = map[column.Kind]string{
	column.Int32: "int32", column.Int64: "int64", column.Uint32: "uint32", column.Uint64: "uint64",
	column.Float32: "float32", column.Float64: "float64", column.Decimal32: "int32", column.Decimal64: "int64",
	column.Bool: "bool",
}

// Words is the size of the state of the page kernel of kind k, in 64-bit
// words.
func Words(k column.Kind) int {
	switch k.Family() {
	case column.FamilyFloat:
		return kernels.AggFloatWords
	case column.FamilyBool:
		return kernels.AggBoolWords
	}
	return kernels.AggIntegerWords
}

// Run is one batch on a device: the page kernels over q as l lays it out,
// leaving the state's Words(q.Kind) words in words and a status word per
// page in status.
type Run func(q *column.Pages, l *Layout, words []uint64, status []uint32) error

// AggregateFitting is Aggregate with smaller batches while run fails for
// want of device memory (tooBig): after a batch of several chunks fails so,
// the call starts again with batches of at most half its stored bytes; a
// batch of one chunk that fails so (a chunk is not cut) ends it, with that
// error. s is left untouched when it fails.
func AggregateFitting(ctx context.Context, p *column.Pages, s *agg.State, batch int64, run Run, tooBig func(error) bool) error {
	for {
		var failed *column.Pages
		err := Aggregate(ctx, p, s, batch, func(q *column.Pages, l *Layout, words []uint64, status []uint32) error {
			err := run(q, l, words, status)
			if err != nil {
				failed = q
			}
			return err
		})
		if err == nil || !tooBig(err) || failed == nil || len(failed.Chunks) < 2 {
			return err
		}
		var stored int64
		for _, c := range failed.Chunks {
			stored += c.Len
		}
		batch = max(1, stored/2)
	}
}

// Aggregate folds p into s a batch of at most batch stored bytes at a time,
// each batch aggregated by run: the one sequence of the CUDA backend and of
// the kernels' emulation. A page that a kernel finds corrupt fails it,
// naming the page; s is left untouched when it fails.
func Aggregate(ctx context.Context, p *column.Pages, s *agg.State, batch int64, run Run) error {
	if !Handles(p.Kind, s.Tracks) {
		return fmt.Errorf("the page kernels do not aggregate %s pages for %s", p.Type, s.Tracks)
	}
	acc := agg.New(p.Kind.Family(), s.Tracks)
	for _, q := range Batches(p, batch) {
		if err := ctx.Err(); err != nil {
			return err
		}
		l, err := Plan(q)
		if err != nil {
			return err
		}
		if len(q.Pages) == 0 {
			continue
		}
		words := make([]uint64, Words(q.Kind))
		status := make([]uint32, len(q.Pages))
		if err := run(q, &l, words, status); err != nil {
			return err
		}
		if err := StatusError(q, status); err != nil {
			return err
		}
		st := kernels.State(q.Kind, q.Rows, words)
		acc.Merge(&st)
	}
	s.Merge(&acc)
	return nil
}
