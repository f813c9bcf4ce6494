package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/metadata"

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
// stores them, the chunks of a column that the engine gives the GPU in one
// call (engine.UpdatePages). The engine decides chunk by
// chunk (engine.PagesOnGPU: by each chunk's codec, encoding and ratio of
// compression, the CPU reading the others at the same time; every chunk
// under --device gpu), so a column may be read by both routes, its plan
// naming the row groups of each and why. The
// walk of each chunk's page headers (pqwalk.go) checks them and records
// the pages; a chunk with a page the kernels do not decode (another
// encoding, levels BIT_PACKED) goes back to the CPU page path, the plan
// saying why. The chunks that the GPU does not read are tasks of the
// workers meanwhile.
//
// Chunks of the codecs the kernels do not decompress (zstd, gzip, brotli,
// LZ4: hostCodec) go up decompressed: their pages are cut into pieces of
// at most hostPieceBytes, and workers decompress a piece at a time into a
// buffer charged to the memory budget, each handing its piece to the GPU
// as uncompressed pages (runHost); the pieces' states are merged in the
// file's order.

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

// gpuLeaf is a leaf some of whose chunks' pages the GPU decodes.
type gpuLeaf struct {
	leaf *parquetLeaf
	// rgs says, per row group, whether the GPU decodes the leaf's chunk
	// there (the planner's choice; a chunk whose walk finds a page the
	// kernels do not decode goes back to the CPU).
	rgs []bool
	// pages: the chunks as stored, when the kernels decompress all of
	// them; else pieces, each decompressed by the host first where its
	// codec is the host's.
	pages  column.Pages
	pieces []hostPiece
	spans  []column.Span // the chunks in the file
	// decoded is the bytes of its pages decompressed, dictionaries included,
	// as the CPU page path counts them (a column's plan has the same bytes
	// whichever route reads its chunks).
	decoded int64
	state   agg.State
	plan    engine.ColumnPlan
	err     error
}

// hostCodec says whether chunks of codec c go to the page kernels
// decompressed by the host's workers: the codecs of the page path other
// than snappy, which the kernels decompress themselves.
func hostCodec(c compress.Compression) bool {
	switch c {
	case compress.Codecs.Gzip, compress.Codecs.Brotli, compress.Codecs.Zstd, compress.Codecs.Lz4, lz4Raw:
		return true
	}
	return false
}

// hostPieceBytes bounds the decompressed pages of a piece (a larger page is
// a piece of its own): what a worker holds while the GPU decodes it (16
// workers: 256 MiB), and enough that the GPU's fixed cost of a call
// (planner.PageHostCallCost) is no more than its copy's time. (A variable
// for the tests.)
var hostPieceBytes int64 = planner.PageHostPieceBytes

// hostPiece is pages that go to the GPU together. Of chunks of a host
// codec (src not nil): pages holds them as they lie once decompressed, one
// after the other in a buffer of size bytes (Data nil until then, their
// chunks' spans in it), and src where each is stored in the file. Of a
// chunk the kernels decompress: pages as stored, the whole chunk (Data the
// mapped file).
type hostPiece struct {
	pages column.Pages
	src   []storedPage
	codec compress.Compression
	size  int64
}

// storedPage is where a page of a host codec's chunk lies in the file:
// stored bytes at at, of which the first levels (a page v2's levels) are
// not compressed; compressed: the rest is (else all are as they are).
type storedPage struct {
	at             int64
	stored, levels int
	compressed     bool
}

// errNotGPUPage is wrapped by the reasons a chunk's pages are not the page
// kernels'.
var errNotGPUPage = errors.New("not a page of the GPU page kernels")

// gpuCandidate returns the page work of leaf l's chunks, one per row group,
// when its pages could go to the page kernels, whatever its chunks hold.
func (r *parquetRun) gpuCandidate(l *parquetLeaf) ([]planner.PageWork, bool) {
	if l.page == nil || r.gpuRefused(l) != "" || (l.stats != nil && l.stats.n > 0) {
		return nil, false
	}
	return r.chunksWork(l.col, false)
}

// gpuRefused says why the CPU page path's leaf l cannot go to the page
// kernels, whatever the planner would say: what its plan tells when the
// engine has a page GPU it could have used (engine.PageColumn.Refused).
// "" for a leaf the kernels could take, and for one the page path does
// not read.
func (r *parquetRun) gpuRefused(l *parquetLeaf) string {
	p := l.page
	switch {
	case p == nil:
		return ""
	case l.elem || l.list != nil || p.maxRep != 0 || p.exists != 0:
		return "the elements of a repeated column"
	case p.maxDef > 1:
		return "a column nested in optional groups (definition levels above 1)"
	case p.int96:
		return "INT96 timestamps"
	case r.pqf.crypt.encrypted:
		return "an encrypted file"
	case r.mapped == nil:
		return "a file not mapped into memory"
	case !column.PageKind(p.pagesKind()) && p.flba > 0:
		return fmt.Sprintf("decimals stored as FIXED_LEN_BYTE_ARRAY of %d bytes", p.flba)
	case !column.PageKind(p.pagesKind()):
		return p.kind.String() + " values"
	}
	return ""
}

// chunksWork is the page work of column col's chunks, one per row group;
// ok is false when a chunk is encrypted, or, unless anyCodec, of a codec
// that neither route's page kernels nor the host take.
func (r *parquetRun) chunksWork(col int, anyCodec bool) (ws []planner.PageWork, ok bool) {
	md := r.pqf.meta
	ws = make([]planner.PageWork, len(md.RowGroups))
	for rg := range md.RowGroups {
		cc, err := md.RowGroup(rg).ColumnChunk(col)
		if err != nil || cc.CryptoMetadata() != nil {
			return nil, false
		}
		c := cc.Compression()
		// (A footer's sizes are the file's to claim: capped, so that no sum
		// of them wraps.)
		stored, decoded := min(max(cc.TotalCompressedSize(), 0), 1<<40), min(max(cc.TotalUncompressedSize(), 0), 1<<40)
		w := &ws[rg]
		switch {
		case c == compress.Codecs.Snappy || c == compress.Codecs.Uncompressed:
			w.AddKernel(planner.ClassOf(c == compress.Codecs.Snappy, dictionaryPages(cc)), stored, decoded)
		case hostCodec(c) || anyCodec:
			w.AddHost(planner.Codec(c.String()), stored, decoded)
		default:
			return nil, false
		}
		w.OneChunk()
	}
	return ws, true
}

// dictionaryPages says whether the data pages of chunk cc hold dictionary
// indices: it has a dictionary, and its encoding statistics, where the
// writer gave them, name no data page of another encoding (a writer falls
// back to PLAIN pages when the dictionary grows too large; such a chunk,
// whose statistics do not count its pages, is taken as of PLAIN pages).
func dictionaryPages(cc *metadata.ColumnChunkMetaData) bool {
	if !cc.HasDictionaryPage() {
		return false
	}
	for _, s := range cc.EncodingStats() {
		if t := s.PageType.String(); (t == "DATA_PAGE" || t == "DATA_PAGE_V2") &&
			s.Encoding != parquet.Encodings.RLEDict && s.Encoding != parquet.Encodings.PlainDict {
			return false
		}
	}
	return true
}

// smallJob reports whether the CPU is estimated to read every chunk of the
// file's leaves in less than the GPU's start (planner.PagesWorthAsking):
// then no part of the file can pay for opening the device
// (engine.WithSmallJob). An encrypted file is never small (its chunks'
// metadata may need keys to be read).
func (r *parquetRun) smallJob() bool {
	if r.pqf.crypt.encrypted || !r.eng.WantsJobSize() {
		return false
	}
	w := planner.PageWork{Threads: r.eng.Threads()}
	for i := range r.leaves {
		chunks, ok := r.chunksWork(r.leaves[i].col, true)
		if !ok {
			return false
		}
		for _, c := range chunks {
			w.Add(c)
		}
		if worth, _ := planner.PagesWorthAsking(w); worth {
			return false
		}
	}
	return true
}

// planChunkBytes bounds what planning one column chunk's route holds: its
// page work in the dataset's columns and the engine's copy (88 bytes each,
// and a host codec's entry), the planner's ranking and the routes' flags
// and reasons (about 350 bytes in all). A footer may list millions of
// chunks: their plan is charged to the budget while it is made.
const planChunkBytes = 512

// planGPU picks the chunks whose pages go to the GPU, and records their
// pages; nil when none do. weighed: the engine weighed the GPU for some
// (a kind and aggregates its page kernels take). The leaves' cpuWhy say
// why the planner left their other chunks to the CPU, where it weighed the
// GPU for them.
func (r *parquetRun) planGPU(ctx context.Context, f io.ReaderAt, size int64) (gl []*gpuLeaf, weighed bool, err error) {
	if r.eng == nil {
		return nil, false, nil
	}
	var cands []*parquetLeaf
	var routes []engine.PageRoute
	plan := int64(len(r.pqf.meta.RowGroups)) * int64(len(r.leaves)) * planChunkBytes
	err = r.budget.Run(ctx, "the plan of the file's chunks", func(c *budget.Charge) error {
		if err := c.Grow("the plan of the file's chunks", plan); err != nil {
			return err
		}
		var cols, refusedCols []engine.PageColumn
		var refused []*parquetLeaf
		cands = nil
		tracks := r.aggs & (agg.Ordered | agg.Moments | agg.ApproxDistinct)
		for i := range r.leaves {
			l := &r.leaves[i]
			if chunks, ok := r.gpuCandidate(l); ok {
				cands = append(cands, l)
				cols = append(cols, engine.PageColumn{Kind: l.page.pagesKind(), Tracks: tracks, Chunks: chunks})
			} else if why := r.gpuRefused(l); why != "" {
				refused = append(refused, l)
				refusedCols = append(refusedCols, engine.PageColumn{Kind: l.page.kind, Tracks: tracks,
					Chunks: make([]planner.PageWork, len(r.pqf.meta.RowGroups)), Refused: why})
			}
		}
		if len(cands)+len(refused) > 0 {
			routes = r.eng.PagesOnGPU(ctx, append(cols, refusedCols...))
		}
		for k, l := range refused { // (their plans say why when the engine could have used a GPU)
			l.cpuWhy = routes[len(cands)+k].CPUWhy
		}
		routes = routes[:min(len(routes), len(cands))]
		for k := range routes {
			if !r.shortOfDevice[cands[k].col] {
				continue
			}
			for rg, on := range routes[k].GPU { // (a try before this one: the CPU reads them)
				if on {
					routes[k].GPU[rg], routes[k].CPUWhy[rg] = false, deviceShortReason
				}
			}
		}
		return nil
	})
	if err != nil || len(cands) == 0 {
		return nil, false, err
	}
	var out []*gpuLeaf
	for k, route := range routes {
		l := cands[k]
		l.cpuWhy = route.CPUWhy // (the CPU's plan says it)
		weighed = weighed || route.OnGPU() || slices.ContainsFunc(route.CPUWhy, func(why string) bool { return why != "" })
		if route.OnGPU() {
			out = append(out, &gpuLeaf{leaf: l, rgs: route.GPU, plan: route.Plan})
		}
	}
	if len(out) == 0 {
		return nil, weighed, nil
	}
	r.eng.WarmPages() // (the device opens while the pages are walked)
	walk := time.Now()
	err = r.gatherPages(ctx, f, size, out)
	startup.Trace("pages walked for the gpu", walk, err)
	if err != nil {
		return nil, true, err
	}
	kept := out[:0]
	for _, g := range out {
		if g.err == nil { // (else no chunk left that the kernels decode: the CPU page path reads the column)
			if c := g.hostCodecs(); c != "" {
				g.plan.Reason += "; its " + c + " pages decompressed on the cpu first"
			}
			kept = append(kept, g)
		}
	}
	return kept, true, nil
}

// hostCodecs names the codecs of g's pages that the host decompresses,
// joined by "/"; "" when none.
func (g *gpuLeaf) hostCodecs() string {
	var names []string
	for _, p := range g.pieces {
		if n := p.codec.String(); p.src != nil && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return strings.Join(names, "/")
}

// gatherPages walks the chunks of the leaves of gl in the row groups of
// their rgs, on r.workers goroutines, and records each leaf's data pages in
// its Pages (or pieces), their dictionaries decompressed into its Dicts. A
// chunk with a page the kernels do not decode goes back to the CPU, its
// leaf's cpuWhy saying why; a leaf left with none gets errNotGPUPage as its
// err. Any other failure is the error of the earliest chunk.
func (r *parquetRun) gatherPages(ctx context.Context, f io.ReaderAt, size int64, gl []*gpuLeaf) error {
	md := r.pqf.meta
	nrg := len(md.RowGroups)
	parts := make([]column.Pages, len(gl)*nrg) // leaf i's row group rg at i*nrg+rg
	srcs := make([][]storedPage, len(parts))   // (a host codec's chunk: where its pages are stored)
	codecs := make([]compress.Compression, len(parts))
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
				errs[j] = r.budget.Run(ctx, "a column chunk's pages for the gpu", func(c *budget.Charge) error {
					*p, srcs[j] = column.Pages{Data: r.mapped}, nil
					return r.gatherChunkOf(ctx, f, size, c, &g, &s, l, rg, p, &srcs[j], &codecs[j])
				})
			}
		}()
	}
	for j := range parts {
		if ctx.Err() != nil {
			break
		}
		if gl[j/nrg].rgs[j%nrg] {
			jobs <- j
		}
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, g := range gl {
		pl := g.leaf.page
		g.pages = column.Pages{Type: g.leaf.typ, Kind: pl.pagesKind(), Nullable: pl.maxDef > 0, Data: r.mapped}
		host, some := false, false
		for rg := 0; rg < nrg; rg++ {
			j := i*nrg + rg
			if !g.rgs[rg] {
				continue
			}
			if errs[j] != nil {
				if !errors.Is(errs[j], errNotGPUPage) {
					return errs[j]
				}
				g.rgs[rg] = false
				g.leaf.cpuWhy[rg] = "parquet pages decoded on the cpu: " + errs[j].Error()
				continue
			}
			some = true
			host = host || srcs[j] != nil
			g.spans = append(g.spans, parts[j].Chunks...)
			for _, d := range parts[j].Dicts {
				g.decoded += int64(len(d))
			}
			for _, pg := range parts[j].Pages {
				g.decoded += int64(pg.Levels + pg.Body)
			}
		}
		if !some {
			g.err = errNotGPUPage
			continue
		}
		var cut pieceCutter
		for rg := 0; rg < nrg; rg++ {
			j := i*nrg + rg
			if !g.rgs[rg] {
				continue
			}
			q := &parts[j]
			q.Type, q.Kind, q.Nullable = g.pages.Type, g.pages.Kind, g.pages.Nullable
			if host {
				cut.add(q, srcs[j], codecs[j])
				continue
			}
			chunk := len(g.pages.Chunks)
			g.pages.Chunks = append(g.pages.Chunks, q.Chunks...)
			g.pages.Dicts = append(g.pages.Dicts, q.Dicts...)
			for _, pg := range q.Pages {
				pg.Chunk += chunk
				g.pages.Pages = append(g.pages.Pages, pg)
			}
			g.pages.Rows += q.Rows
		}
		cut.flush()
		g.pieces = cut.out
	}
	return nil
}

// pieceCutter cuts a leaf's chunks, one after the other, into the pieces
// that go to the GPU (out): runs of pages of one codec the host
// decompresses, across chunks, of at most hostPieceBytes decompressed (a
// larger page is a piece of its own), each laid out from 0; or a chunk
// whole whose pages go up as stored.
type pieceCutter struct {
	out []hostPiece
	cur *hostPiece
}

// add cuts the pages of p, one chunk, stored where src says (one per
// page; nil: they go up as stored) in codec.
func (c *pieceCutter) add(p *column.Pages, src []storedPage, codec compress.Compression) {
	if src == nil {
		c.flush()
		c.out = append(c.out, hostPiece{pages: *p})
		return
	}
	chunk := -1 // (p's chunk in the current piece)
	for i, pg := range p.Pages {
		n := int64(pg.Stored)
		if c.cur != nil && (c.cur.codec != codec || c.cur.size+n > hostPieceBytes) {
			c.flush()
		}
		if c.cur == nil {
			c.cur = &hostPiece{pages: column.Pages{Type: p.Type, Kind: p.Kind, Nullable: p.Nullable}, codec: codec}
			chunk = -1
		}
		q := &c.cur.pages
		if chunk < 0 {
			chunk = len(q.Chunks)
			q.Chunks = append(q.Chunks, column.Span{Off: c.cur.size})
			q.Dicts = append(q.Dicts, p.Dicts[0])
		}
		pg.Chunk, pg.Offset = chunk, c.cur.size
		q.Pages = append(q.Pages, pg)
		q.Rows += int64(pg.Rows)
		q.Chunks[chunk].Len += n
		c.cur.src = append(c.cur.src, src[i])
		c.cur.size += n
	}
}

// flush ends the current piece.
func (c *pieceCutter) flush() {
	if c.cur != nil {
		c.out = append(c.out, *c.cur)
		c.cur = nil
	}
}

// gatherChunkOf records the pages of leaf l's chunk in row group rg in p,
// with the walk g and the buffers s of the calling goroutine.
func (r *parquetRun) gatherChunkOf(ctx context.Context, f io.ReaderAt, size int64, charge *budget.Charge, g *pageGuard, s *pageScratch, l *parquetLeaf, rg int, p *column.Pages, src *[]storedPage, codec *compress.Compression) error {
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
	*codec = c.codec
	populateMapped(r.mapped, c.off, c.end-c.off)
	if err := s.gatherChunk(ctx, g, &c, p, src, rg, rows, l.page); err != nil {
		if errors.Is(err, errNotGPUPage) {
			return err
		}
		return fmt.Errorf("row group %d: column %q: %w", rg, l.name, err)
	}
	return nil
}

// gatherChunk records the pages of chunk c (row group rg, of rows rows) of
// leaf l in p as its walk checks them. Those of a host codec's chunk are
// recorded as they will lie decompressed, one after the other from 0, and
// where each is stored in *src.
func (s *pageScratch) gatherChunk(ctx context.Context, g *pageGuard, c *guardChunk, p *column.Pages, src *[]storedPage, rg int, rows int64, l *pageLeaf) error {
	width, bools := l.width(), l.kind == column.Bool
	codec, err := compress.GetCodec(c.codec)
	if err != nil {
		return err
	}
	snappy, host := c.codec == compress.Codecs.Snappy, hostCodec(c.codec)
	chunk := len(p.Chunks)
	p.Chunks = append(p.Chunks, column.Span{Off: c.off, Len: c.end - c.off})
	var at int64 // (a host codec's chunk: where the next page lies decompressed)
	if host {
		*src = []storedPage{}
	}
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
		if host {
			compressed := pg.typ == pageTypeData || pg.isCompressed
			*src = append(*src, storedPage{at: pg.at, stored: page.Stored, levels: page.Levels, compressed: compressed})
			if !compressed && page.Body != page.Stored-page.Levels { // (what arrow-go reads)
				return fmt.Errorf("page %d: an uncompressed page of %d bytes said to hold %d", pg.index, page.Stored, page.Body+page.Levels)
			}
			page.Offset, page.Stored, page.Snappy = at, page.Levels+page.Body, false
			at += int64(page.Stored)
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

// runGPU aggregates the leaves of gl on the GPU, in its own goroutine:
// done is closed when all are. The leaves whose pages go up as stored
// come first, one after the other; then those of pieces, all in one pool
// (runHost).
func (r *parquetRun) runGPU(ctx context.Context, gl []*gpuLeaf, done chan<- struct{}) {
	defer close(done)
	var hosted []*gpuLeaf
	for _, g := range gl {
		g.state = agg.New(g.leaf.page.kind.Family(), agg.Default)
		if g.pieces != nil {
			hosted = append(hosted, g)
			continue
		}
		if ctx.Err() != nil {
			g.err = ctx.Err()
			return
		}
		start := time.Now()
		g.err = r.eng.UpdatePages(ctx, &g.pages, &g.state)
		g.plan.Measured = time.Since(start)
		if r.gpuDone(g) != nil && !errors.Is(g.err, engine.ErrDeviceMemory) {
			return // (too little device memory: the next leaves are tried, so that a read again knows them all)
		}
	}
	if len(hosted) > 0 {
		r.runHost(ctx, hosted)
		for _, g := range hosted {
			if r.gpuDone(g) != nil {
				return
			}
		}
	}
}

// gpuDone ends leaf g on the GPU: its pages' bytes counted and their
// chunks' mapped pages released; its error named by its column, and
// returned.
func (r *parquetRun) gpuDone(g *gpuLeaf) error {
	g.plan.Bytes += g.decoded
	for _, s := range g.spans {
		releaseMapped(r.mapped, s.Off, s.Len)
	}
	if g.err != nil {
		g.err = fmt.Errorf("column %q: %w", g.leaf.name, g.err)
	}
	return g.err
}

// runHost aggregates the pieces of the leaves of gl into their states:
// r.workers goroutines take a piece at a time, in the leaves' order,
// decompress it (a host codec's) into a buffer charged to the budget and
// fold it on the GPU, holding the buffer until then; each leaf's pieces'
// states are merged in their order. The first piece to fail stops the
// others, and is its leaf's error. A worker keeps its buffer for its next
// piece (a new one each time costs its pages' first touch again); between
// two pieces it is not charged. A leaf's time is from the start to its
// last piece's end.
func (r *parquetRun) runHost(ctx context.Context, gl []*gpuLeaf) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type job struct {
		g     *gpuLeaf
		p     *hostPiece
		state agg.State
		err   error
		end   time.Time
	}
	var all []job
	for _, g := range gl {
		for i := range g.pieces {
			all = append(all, job{g: g, p: &g.pieces[i]})
		}
	}
	start := time.Now()
	jobs := make(chan *job)
	var wg sync.WaitGroup
	for w := 0; w < max(1, min(r.workers, len(all))); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer debug.SetPanicOnFault(debug.SetPanicOnFault(true)) // (the mapped file's faults: mapped.go)
			var zd zstdDecoder
			var buf []byte // (kept from piece to piece: charged while a piece uses it, dropped when it does not fit)
			for j := range jobs {
				p := j.p
				j.err = r.budget.Run(ctx, "pages decompressed for the gpu", func(c *budget.Charge) error {
					j.state = agg.New(j.g.leaf.page.kind.Family(), agg.Default)
					q := p.pages
					if p.src != nil {
						if int64(cap(buf)) < p.size {
							buf = nil
						}
						if err := c.Grow("pages decompressed for the gpu", max(p.size, int64(cap(buf)))); err != nil {
							buf = nil
							return err
						}
						if buf == nil {
							buf = make([]byte, p.size)
						}
						q.Data = buf[:p.size]
						if err := inflatePiece(ctx, p, &zd, q.Data, r.mapped); err != nil {
							return err
						}
					}
					return r.eng.UpdatePages(ctx, &q, &j.state)
				})
				j.end = time.Now()
				if j.err != nil {
					cancel()
				}
			}
		}()
	}
	for i := range all {
		if ctx.Err() != nil {
			break
		}
		jobs <- &all[i]
	}
	close(jobs)
	wg.Wait()
	var failed *job // (the first error, or the first that is no cancel of the others)
	for i := range all {
		if j := &all[i]; j.err != nil {
			if failed == nil {
				failed = j
			}
			if !errors.Is(j.err, context.Canceled) {
				failed = j
				break
			}
		}
	}
	if failed == nil && ctx.Err() != nil {
		gl[0].err = ctx.Err()
		return
	}
	if failed != nil {
		failed.g.err = failed.err
		return
	}
	for i := range all {
		j := &all[i]
		j.g.state.Merge(&j.state)
		j.g.plan.Measured = max(j.g.plan.Measured, j.end.Sub(start))
	}
}

// inflatePiece decompresses the pages of piece p from the mapped file into
// buf (p.size bytes) where p.pages puts them; zd decodes zstd pages. A
// page whose bytes are corrupt is an error naming it.
func inflatePiece(ctx context.Context, p *hostPiece, zd *zstdDecoder, buf, mapped []byte) (err error) {
	codec, err := compress.GetCodec(p.codec)
	if err != nil {
		return err
	}
	for i, s := range p.src {
		if err := ctx.Err(); err != nil {
			return err
		}
		pg := &p.pages.Pages[i]
		if s.at < 0 || s.stored < 0 || s.at > int64(len(mapped))-int64(s.stored) { // (the walk keeps pages in their chunk)
			return fmt.Errorf("row group %d: page %d: %d bytes at %d outside the file", pg.RowGroup, pg.Index, s.stored, s.at)
		}
		out, in := buf[pg.Offset:pg.Offset+int64(pg.Stored)], mapped[s.at:s.at+int64(s.stored)]
		if s.compressed {
			err = decodePage(codec, p.codec, zd, out, in, s.levels)
		} else {
			err = runGuarded(func() error { copy(out, in); return nil }) // (a fault: the file truncated)
		}
		if err != nil {
			return fmt.Errorf("row group %d: page %d: %w", pg.RowGroup, pg.Index, err)
		}
	}
	return nil
}

// splitPlan is the plan of leaf l from the plan gp of its chunks the GPU
// decoded: gp when the GPU decoded every chunk; else the plan of both
// backends, its reason saying which row groups took which route, and why.
func (l *parquetLeaf) splitPlan(gp engine.ColumnPlan) engine.ColumnPlan {
	if !slices.Contains(l.gpu, false) {
		return gp
	}
	gp.Backend = planner.Split
	gp.Reason = "row groups " + rowGroups(l.gpu) + ": " + gp.Reason + "; " + l.cpuReasons()
	return gp
}

// gpuShare is the GPU's share of leaf l's chunks, in decompressed bytes as
// the footer gives them: a plan's GPUFraction (1 when the GPU decoded every
// chunk).
func (r *parquetRun) gpuShare(l *parquetLeaf) float64 {
	var mine, all int64
	for rg, on := range l.gpu {
		if cc, err := r.pqf.meta.RowGroup(rg).ColumnChunk(l.col); err == nil {
			n := min(max(cc.TotalUncompressedSize(), 0), 1<<40) // (as chunksWork caps it)
			all += n
			if on {
				mine += n
			}
		}
	}
	if all == 0 {
		return 1
	}
	return float64(mine) / float64(all)
}

// cpuReasons says why l's chunks that the GPU does not decode stay on the
// CPU: the reason alone when they all have one and the GPU decodes none of
// l's chunks; else the row groups of each reason (the CPU page path's name
// for those the GPU was not weighed for). "" when the GPU was weighed for
// none of them.
func (l *parquetLeaf) cpuReasons() string {
	var whys []string
	blank := false
	for rg, why := range l.cpuWhy {
		switch {
		case l.onGPU(rg):
		case why == "":
			blank = true
		case !slices.Contains(whys, why):
			whys = append(whys, why)
		}
	}
	switch {
	case len(whys) == 0 && l.gpu == nil:
		return ""
	case len(whys) == 1 && !blank && l.gpu == nil:
		return whys[0]
	}
	var parts []string
	if blank {
		parts = append(parts, "row groups "+l.cpuRowGroups("")+": "+pageReason)
	}
	for _, why := range whys {
		parts = append(parts, "row groups "+l.cpuRowGroups(why)+": "+why)
	}
	return strings.Join(parts, "; ")
}

// cpuRowGroups lists the row groups whose chunk of l the CPU reads with
// reason why ("": none given).
func (l *parquetLeaf) cpuRowGroups(why string) string {
	sel := make([]bool, len(l.cpuWhy))
	for rg := range sel {
		sel[rg] = !l.onGPU(rg) && l.cpuWhy[rg] == why
	}
	return rowGroups(sel)
}

// rowGroups lists the row groups selected in sel as ranges: "0-3, 7". Past
// maxRanges ranges it lists the first ones, an ellipsis and the last, and
// how many row groups of how many are selected: a plan's reason stays a
// line long however the file's row groups alternate.
func rowGroups(sel []bool) string {
	var first []string // the first maxRanges ranges
	last := ""
	ranges, count := 0, 0
	for rg := 0; rg < len(sel); rg++ {
		if !sel[rg] {
			continue
		}
		end := rg
		for end+1 < len(sel) && sel[end+1] {
			end++
		}
		count += end - rg + 1
		last = fmt.Sprint(rg)
		if end > rg {
			last = fmt.Sprintf("%d-%d", rg, end)
		}
		if ranges < maxRanges {
			first = append(first, last)
		}
		ranges++
		rg = end
	}
	if ranges <= maxRanges {
		return strings.Join(first, ", ")
	}
	return fmt.Sprintf("%s, …, %s (%d of %d)", strings.Join(first[:maxRanges-1], ", "), last, count, len(sel))
}

// maxRanges is the most ranges of row groups that rowGroups lists (a
// variable for the tests that read a whole list).
var maxRanges = 8
