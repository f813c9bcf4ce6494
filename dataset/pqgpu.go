package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/budget"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/internal/startup"
	"github.com/arrowagg/arrowagg/planner"
)

// The GPU page route: the Parquet columns that the GPU's page kernels
// decode (column.Pages: flat integers, floats and decimals stored as
// integers, pages v1 or v2, PLAIN or dictionary-encoded, uncompressed or
// snappy; flat booleans, PLAIN or RLE) go to the device as the file
// stores them, each column's chunks of every row group in one call
// (engine.UpdatePages), when the engine says the GPU is faster for them
// (engine.PagesOnGPU: always under --device gpu). The walk of each chunk's
// page headers (pqwalk.go) checks them and records the pages; a chunk
// with a page the kernels do not decode (another codec or encoding, levels
// BIT_PACKED) leaves its column to the CPU page path, whole. The other
// columns' chunks are tasks of the workers meanwhile.

// pagesKind is the kind of leaf l's values as its pages store them
// (column.Pages.Kind): a decimal stored as INT32 or INT64 is Decimal32 or
// Decimal64 whatever its Arrow type's width; Unsupported for the other
// decimals stored in bytes.
func (l *pageLeaf) pagesKind() column.Kind {
	switch {
	case l.flba == 0:
		return l.kind
	case l.le && l.flba == 4:
		return column.Decimal32
	case l.le && l.flba == 8:
		return column.Decimal64
	}
	return column.Unsupported
}

// gpuLeaf is a leaf whose pages the GPU decodes.
type gpuLeaf struct {
	leaf  *parquetLeaf
	pages column.Pages
	state agg.State
	plan  engine.ColumnPlan
	err   error
}

// errNotGPUPage is wrapped by the reasons a chunk's pages are not the page
// kernels'.
var errNotGPUPage = errors.New("not a page of the GPU page kernels")

// gpuCandidate says whether leaf l's pages could go to the page kernels,
// whatever its chunks hold, and adds to w what the CPU does instead with
// its chunks.
func (r *parquetRun) gpuCandidate(l *parquetLeaf, w *planner.PageWork) bool {
	p := l.page
	if p == nil || l.elem || l.list != nil || p.maxRep != 0 || p.maxDef > 1 || p.int96 ||
		p.exists != 0 || r.mapped == nil || r.pqf.crypt.encrypted || (l.stats != nil && l.stats.n > 0) ||
		!column.PageKind(p.pagesKind()) {
		return false
	}
	md := r.pqf.meta
	var stored, decoded int64
	for rg := range md.RowGroups {
		cc, err := md.RowGroup(rg).ColumnChunk(l.col)
		if err != nil || cc.CryptoMetadata() != nil {
			return false
		}
		if c := cc.Compression(); c != compress.Codecs.Snappy && c != compress.Codecs.Uncompressed {
			return false
		}
		stored += max(cc.TotalCompressedSize(), 0)
		decoded += max(cc.TotalUncompressedSize(), 0)
	}
	w.Stored, w.Decoded = w.Stored+stored, w.Decoded+decoded
	w.PageTasks += len(md.RowGroups)
	return true
}

// planGPU picks the leaves whose pages go to the GPU and records their
// pages; nil when none do.
func (r *parquetRun) planGPU(ctx context.Context, f io.ReaderAt, size int64) ([]*gpuLeaf, error) {
	if r.eng == nil {
		return nil, nil
	}
	var cands []*parquetLeaf
	var w planner.PageWork // (its Threads the engine's)
	for i := range r.leaves {
		l := &r.leaves[i]
		if r.gpuCandidate(l, &w) {
			cands = append(cands, l)
		}
	}
	var out []*gpuLeaf
	for _, l := range cands {
		tracks := r.aggs & (agg.Ordered | agg.Moments | agg.ApproxDistinct)
		ok, plan := r.eng.PagesOnGPU(ctx, l.page.pagesKind(), tracks, w)
		if ok {
			out = append(out, &gpuLeaf{leaf: l, plan: plan})
		} else {
			l.gpuWhy = plan.Reason // (the CPU's plan says it)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	r.eng.WarmPages() // (the device opens while the pages are walked)
	walk := time.Now()
	err := r.gatherPages(ctx, f, size, out)
	startup.Trace("pages walked for the gpu", walk, err)
	if err != nil {
		return nil, err
	}
	kept := out[:0]
	for _, g := range out {
		if g.err == nil { // (else a page the kernels do not decode: the CPU page path reads the column)
			kept = append(kept, g)
		}
	}
	return kept, nil
}

// gatherPages walks the chunks of the leaves of gl in every row group, on
// r.workers goroutines, and records each leaf's data pages in its Pages,
// their dictionaries decompressed into its Dicts. A leaf with a page the
// kernels do not decode gets errNotGPUPage as its err; any other failure
// is the error of the earliest chunk.
func (r *parquetRun) gatherPages(ctx context.Context, f io.ReaderAt, size int64, gl []*gpuLeaf) error {
	md := r.pqf.meta
	nrg := len(md.RowGroups)
	parts := make([]column.Pages, len(gl)*nrg) // leaf i's row group rg at i*nrg+rg
	errs := make([]error, len(parts))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < max(1, min(r.workers, len(parts))); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var g pageGuard
			var s pageScratch
			for j := range jobs {
				l, rg := gl[j/nrg].leaf, j%nrg
				p := &parts[j]
				*p = column.Pages{Data: r.mapped}
				errs[j] = r.budget.Run(ctx, "a column chunk's pages for the gpu", func(c *budget.Charge) error {
					return r.gatherChunkOf(ctx, f, size, c, &g, &s, l, rg, p)
				})
			}
		}()
	}
	for j := range parts {
		if ctx.Err() != nil {
			break
		}
		jobs <- j
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, g := range gl {
		pl := g.leaf.page
		g.pages = column.Pages{Type: g.leaf.typ, Kind: pl.pagesKind(), Nullable: pl.maxDef > 0, Data: r.mapped}
		for rg := 0; rg < nrg; rg++ {
			j := i*nrg + rg
			if errs[j] != nil {
				if errors.Is(errs[j], errNotGPUPage) {
					g.err = errs[j]
					break
				}
				return errs[j]
			}
			q := &parts[j]
			chunk := len(g.pages.Chunks)
			g.pages.Chunks = append(g.pages.Chunks, q.Chunks...)
			g.pages.Dicts = append(g.pages.Dicts, q.Dicts...)
			for _, pg := range q.Pages {
				pg.Chunk += chunk
				g.pages.Pages = append(g.pages.Pages, pg)
			}
			g.pages.Rows += q.Rows
		}
	}
	return nil
}

// gatherChunkOf records the pages of leaf l's chunk in row group rg in p,
// with the walk g and the buffers s of the calling goroutine.
func (r *parquetRun) gatherChunkOf(ctx context.Context, f io.ReaderAt, size int64, charge *budget.Charge, g *pageGuard, s *pageScratch, l *parquetLeaf, rg int, p *column.Pages) error {
	md := r.pqf.meta
	rows := md.RowGroup(rg).NumRows()
	cc, err := md.RowGroup(rg).ColumnChunk(l.col)
	if err != nil {
		return fmt.Errorf("row group %d: column %q: %w", rg, l.name, err)
	}
	if cc.NumValues() != rows {
		return fmt.Errorf("row group %d: column %q: the column chunk has %d values, the row group %d rows", rg, l.name, cc.NumValues(), rows)
	}
	c, ok, err := r.guardChunkOf(f, size, cc, l.col, false)
	if err != nil {
		return fmt.Errorf("row group %d: column %q: %w", rg, l.name, err)
	}
	if !ok {
		return errNotGPUPage
	}
	c.charge = charge
	populateMapped(r.mapped, c.off, c.end-c.off)
	if err := s.gatherChunk(ctx, g, &c, p, rg, rows, l.page); err != nil {
		if errors.Is(err, errNotGPUPage) {
			return err
		}
		return fmt.Errorf("row group %d: column %q: %w", rg, l.name, err)
	}
	return nil
}

// gatherChunk records the pages of chunk c (row group rg, of rows rows) of
// leaf l in p as its walk checks them.
func (s *pageScratch) gatherChunk(ctx context.Context, g *pageGuard, c *guardChunk, p *column.Pages, rg int, rows int64, l *pageLeaf) error {
	width, bools := l.width(), l.kind == column.Bool
	codec, err := compress.GetCodec(c.codec)
	if err != nil {
		return err
	}
	snappy := c.codec == compress.Codecs.Snappy
	chunk := len(p.Chunks)
	p.Chunks = append(p.Chunks, column.Span{Off: c.off, Len: c.end - c.off})
	p.Dicts = append(p.Dicts, nil)
	g.begin(c)
	defer g.end()
	s.mapped = c.mapped
	defer func() { s.page = dropCharged(c.charge, s.page) }()
	hasDict := false
	var seen int64
	for read := 0; ; read++ {
		pg, err := g.next(ctx)
		if err != nil {
			return err
		}
		if pg == nil {
			break
		}
		enc := parquet.Encoding(pg.encoding)
		n := int(pg.numValues)
		switch pg.typ {
		case pageTypeDict:
			if bools {
				return fmt.Errorf("%w: a dictionary of booleans", errNotGPUPage)
			}
			data, err := s.pageData(ctx, g, codec, pg)
			if err != nil {
				return fmt.Errorf("page %d: %w", pg.index, err)
			}
			if err := checkDictPage(pg, read, hasDict, data, width); err != nil {
				return err
			}
			if err := c.charge.Grow("a dictionary for the gpu", int64(n*width)); err != nil {
				return err
			}
			hasDict = true
			p.Dicts[chunk] = append([]byte(nil), data[:n*width]...)
			continue
		case pageTypeData, pageTypeDataV2:
		default:
			read--
			continue
		}
		if n < 0 || int64(n) > rows-seen {
			return fmt.Errorf("page %d: %d values, but the column chunk has %d rows left", pg.index, n, rows-seen)
		}
		page := column.Page{Chunk: chunk, Offset: pg.at, Rows: n, RowGroup: rg, Index: pg.index}
		switch {
		case enc == parquet.Encodings.Plain:
		case enc == parquet.Encodings.RLE && bools:
			page.RLE = true
		case dictEncoded(enc) && !bools:
			if !hasDict {
				return fmt.Errorf("page %d: dictionary-encoded without a dictionary page", pg.index)
			}
			page.Dictionary = true
		default:
			return fmt.Errorf("%w: encoding %s of %s values", errNotGPUPage, enc, c.phys)
		}
		if pg.typ == pageTypeData {
			if c.maxDef > 0 && parquet.Encoding(pg.defEncoding) != parquet.Encodings.RLE {
				return fmt.Errorf("%w: definition levels %s", errNotGPUPage, parquet.Encoding(pg.defEncoding))
			}
			page.Stored, page.Body, page.Snappy = int(pg.compressed), int(pg.uncompressed), snappy
		} else {
			rl, dl := int(pg.repBytes), int(pg.defBytes)
			page.V2, page.Levels, page.DefLevels = true, rl+dl, dl
			page.Snappy = snappy && pg.isCompressed
			page.Stored = int(pg.compressed)
			if !pg.isCompressed {
				page.Stored = int(pg.uncompressed) // (what arrow-go reads)
			}
			page.Body = int(pg.uncompressed) - page.Levels
			if rl < 0 || dl < 0 || page.Levels > page.Stored || page.Body < 0 {
				return fmt.Errorf("page %d: levels of %d+%d bytes in a page of %d", pg.index, rl, dl, pg.uncompressed)
			}
		}
		if page.Snappy && page.Body == 0 && page.Stored == page.Levels {
			page.Snappy = false // (no body: writers leave out the compressed form of nothing)
		}
		if !page.Snappy && page.Body != page.Stored-page.Levels {
			return fmt.Errorf("page %d: an uncompressed page of %d bytes said to hold %d", pg.index, page.Stored, page.Body+page.Levels)
		}
		p.Pages = append(p.Pages, page)
		p.Rows += int64(n)
		seen += int64(n)
	}
	if seen != rows {
		return fmt.Errorf("the pages have %d values, the column chunk metadata says %d", seen, rows)
	}
	return nil
}

// runGPU aggregates the leaves of gl on the GPU, one after the other, in
// its own goroutine: done is closed when all are.
func (r *parquetRun) runGPU(ctx context.Context, gl []*gpuLeaf, done chan<- struct{}) {
	defer close(done)
	for _, g := range gl {
		if ctx.Err() != nil {
			g.err = ctx.Err()
			return
		}
		start := time.Now()
		g.state = agg.New(g.leaf.page.kind.Family(), agg.Default)
		g.err = r.eng.UpdatePages(ctx, &g.pages, &g.state)
		g.plan.Measured = time.Since(start)
		for _, s := range g.pages.Chunks {
			g.plan.Bytes += s.Len
			releaseMapped(r.mapped, s.Off, s.Len)
		}
		if g.err != nil {
			g.err = fmt.Errorf("column %q: %w", g.leaf.name, g.err)
			return
		}
	}
}
