package dataset

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/endian"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/budget"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/planner"
)

// An IPC file is aggregated from its footer: its record batches are
// decoded by the engine's threads in parallel (a few batches ahead), and
// each column of a batch is cut into windows of engine.MorselSize values
// that the same threads fold into partial states of their own, each window
// through Engine.UpdateView in the thread that asks (one morsel: the CPU
// backend folds it in the caller's goroutine). The windows' states are
// merged in order, batch after batch, into one state per column: the
// morsels and the order of the merges are those of an Accumulator fed the
// batches in order, so the results are the same to the last bit.
//
// The mapped file is read only by goroutines that run with
// debug.SetPanicOnFault: a file truncated while it is read makes a fault (a
// SIGBUS) there, which becomes an error naming the file instead of a crash.
// A window the planner gives the GPU (all of it or a share) is copied out
// of the mapping first: the GPU backend reads host memory in goroutines of
// its own, where a fault could not be caught.

// ipcTask is a unit of work of the pool; it returns the error of its batch.
type ipcTask func() error

// ipcPool runs tasks on goroutines that turn memory faults into panics, and
// panics into errors.
type ipcPool struct {
	mu      sync.Mutex
	cond    *sync.Cond
	tasks   []poolTask
	closed  bool
	wg      sync.WaitGroup
	stopped bool
}

type poolTask struct {
	run  ipcTask
	done func(error)
}

func newIPCPool(workers int) *ipcPool {
	p := &ipcPool{}
	p.cond = sync.NewCond(&p.mu)
	for w := 0; w < workers; w++ {
		p.wg.Add(1)
		go p.work()
	}
	return p
}

func (p *ipcPool) push(run ipcTask, done func(error)) {
	p.mu.Lock()
	p.tasks = append(p.tasks, poolTask{run, done})
	p.mu.Unlock()
	p.cond.Signal()
}

func (p *ipcPool) work() {
	defer p.wg.Done()
	debug.SetPanicOnFault(true)
	for {
		p.mu.Lock()
		for len(p.tasks) == 0 && !p.closed {
			p.cond.Wait()
		}
		if len(p.tasks) == 0 {
			p.mu.Unlock()
			return
		}
		t := p.tasks[0]
		p.tasks = p.tasks[1:]
		stopped := p.stopped
		p.mu.Unlock()
		if stopped {
			t.done(errAborted)
			continue
		}
		t.done(runGuarded(t.run))
	}
}

// stop makes the remaining tasks fail at once and waits for the workers.
func (p *ipcPool) close(stop bool) {
	p.mu.Lock()
	p.closed = true
	p.stopped = p.stopped || stop
	p.mu.Unlock()
	p.cond.Broadcast()
	p.wg.Wait()
}

// runGuarded runs f, turning a panic into an error: a memory fault of the
// mapped file (it was truncated) into errFileChanged.
func runGuarded(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = faultError(p)
		}
	}()
	return f()
}

// ipcFileBatch is one record batch on its way through the pool.
type ipcFileBatch struct {
	block ipcBlock
	index int // of the file's record batches, from 0
	dicts map[int64]*array.Data
	// charged is what the batch holds of the budget, from before it is
	// read until it is released.
	charged int64
	budget  *budget.Budget

	msg  *ipcMessage
	rec  arrow.Record
	cols []arrow17.Column // per leaf
	wins [][]agg.State    // per leaf, per window
	took [][]time.Duration
	plan []engine.ColumnPlan

	mu      sync.Mutex
	err     error
	pending int // tasks not finished
	tasks   int // tasks queued
	done    chan struct{}
	report  func(int64) // progress: how far into the file the batch is
}

// finish records the end of one of the batch's tasks.
func (b *ipcFileBatch) finish(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil && b.err == nil {
		b.err = err
	}
	if b.pending--; b.pending == 0 {
		close(b.done)
	}
	// Progress as the tasks end, from the workers: the coordinator may
	// not run for a while when they keep every CPU busy.
	b.report(b.block.offset + b.block.meta + b.block.body*int64(b.tasks-b.pending)/int64(b.tasks))
}

func (b *ipcFileBatch) release() {
	for i := range b.cols {
		b.cols[i].Release()
	}
	if b.rec != nil {
		b.rec.Release()
		b.rec = nil
	}
	if b.msg != nil {
		b.msg.done()
		b.msg = nil
	}
	for _, d := range b.dicts {
		d.Release()
	}
	b.dicts = nil
	b.budget.Release(b.charged)
	b.charged = 0
}

// ipcFileRun is the aggregation of one IPC file.
type ipcFileRun struct {
	eng    *engine.Engine
	mem    *guardAllocator // (tracking: freed by close)
	data   *ipcData
	schema *arrow.Schema
	fields []ipcField
	dtypes map[int64]arrow.DataType
	leaves []arrow17.Leaf
	aggs   agg.Set
	pool   *ipcPool
	budget *budget.Budget
	// dictCharged is what the dictionaries in use hold of the budget, by
	// id.
	dictCharged map[int64]int64
	// footerCharged is what the footer (or a stream's messages listed)
	// holds of the budget until close.
	footerCharged int64
}

// aggregateIPCFile aggregates the leaves of IPC file source i (as the file
// has them) into src and returns its rows; an IPC stream file too, its
// messages walked in place (streamFooter), its errors worded as the
// stream's. errNotInPlace, before anything is read, says that the file is
// to be read as a stream by the stream reader (so are the files of which
// element columns are selected: the accumulator views the elements that
// exist, batch by batch).
func (d *Dataset) aggregateIPCFile(ctx context.Context, eng *engine.Engine, i int, leaves []arrow17.Leaf, aggs agg.Set, src *partial, byName map[string]int, prog *tracker) (rows int64, err error) {
	if d.sources[i].Format == IPCStream {
		defer func() { err = asIPCStream(err) }()
	}
	for _, l := range leaves {
		if l.Repeated > 0 { // element columns: the engine's accumulator over the stream's batches
			return 0, errNotInPlace
		}
	}
	r, footer, err := d.openIPCRun(ctx, i, eng, leaves, aggs)
	if err != nil {
		return 0, err
	}
	defer func() {
		if cerr := r.close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if r.smallFile(footer) {
		// (Under --device auto, no calibration, no driver for this file.)
		ctx = engine.WithSmallJob(ctx)
	}
	states, plans, rows, err := r.run(ctx, footer, prog)
	if err != nil {
		return 0, err
	}
	if err := r.data.unchanged(); err != nil {
		return 0, err
	}
	for k, l := range leaves {
		src.add(byName[l.Name], states[k], 0, plans[k])
	}
	prog.finish()
	return rows, nil
}

// openIPCRun opens IPC source i to be read in place from its footer (an
// IPC stream file: its messages walked in place and listed as a footer
// would list them), for the leaves (aggregated by eng, with aggs) or for
// grouping (eng nil): the run, and its footer, charged to the budget until
// the run is closed. errNotInPlace, before anything is read, says that the
// file is to be read as a stream by the stream reader.
func (d *Dataset) openIPCRun(ctx context.Context, i int, eng *engine.Engine, leaves []arrow17.Leaf, aggs agg.Set) (r *ipcFileRun, footer *ipcFooter, err error) {
	s, fi := d.sources[i], &d.files[i]
	data, err := openIPCData(s, d.opts.Mem)
	if err != nil {
		return nil, nil, err
	}
	run := &ipcFileRun{eng: eng, data: data, schema: fi.schema, leaves: leaves, aggs: aggs, dtypes: map[int64]arrow.DataType{}, budget: d.opts.Budget}
	r = run
	defer func() {
		if err != nil {
			run.close() //nolint:errcheck // (the error is err)
		}
	}()
	if s.Format == IPCStream {
		// A stream's messages walked in place, listed as a footer would
		// list them: charged while the file is read.
		footer, err = streamFooter(data, func(n int64) error {
			if err := d.opts.Budget.Acquire(ctx, "the Arrow IPC stream's messages listed", n); err != nil {
				return err
			}
			r.footerCharged = n
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	} else {
		// The footer, read and its blocks listed: charged while the file
		// is read (ipcFooterMemory times its bytes).
		start, err := ipcFooterStart(data.f, data.size)
		if err != nil {
			return nil, nil, err
		}
		footerCharge := ipcFooterMemory * (data.size - ipcFileTrailer - start)
		if err := d.opts.Budget.Acquire(ctx, "the Arrow IPC file footer", footerCharge); err != nil {
			return nil, nil, err
		}
		r.footerCharged = footerCharge
		if footer, err = readIPCFooter(data.f, data.size); err != nil {
			return nil, nil, err
		}
	}
	// The file's own schema says its byte order (the schema probed through
	// Arrow's reader is already the native one: that reader swaps the bytes).
	if footer.bigEndian() != (endian.NativeEndian == endian.BigEndian) {
		return nil, nil, errNotInPlace
	}
	r.mem = trackingAllocator(d.opts.Mem)
	if r.fields, err = ipcLayout(fi.schema, footer.schema, r.dtypes); err != nil {
		return nil, nil, err
	}
	return r, footer, nil
}

// close releases what the run holds once its batches are released: what a
// panic left allocated, the footer's charge, the file.
func (r *ipcFileRun) close() error {
	if r.mem != nil {
		r.mem.freeAll()
	}
	r.budget.Release(r.footerCharged)
	r.footerCharged = 0
	return r.data.close()
}

// smallFile reports whether the CPU is estimated to read every batch of
// the file in less than the GPU's start (engine.WithSmallJob): ipcWork's
// estimate, when the file is mapped. A fault of the mapping, or a batch
// the estimate cannot read, makes it false: the read that follows reports
// it.
func (r *ipcFileRun) smallFile(footer *ipcFooter) (small bool) {
	if r.data.mapped == nil || !r.eng.WantsJobSize() {
		return false
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			small = false
		}
	}()
	w, ok := r.ipcWork(footer)
	if !ok {
		return false
	}
	worth, _ := planner.PagesWorthAsking(w)
	return !worth
}

// ipcWork is what the CPU does to read the file's batches (blockWork),
// until it passes the GPU's start (planner.PagesWorthAsking); ok is false
// for a message it cannot read.
func (r *ipcFileRun) ipcWork(footer *ipcFooter) (w planner.PageWork, ok bool) {
	w.Threads = r.eng.Threads()
	for _, blk := range footer.blocks {
		if !blockWork(&w, r.data, blk, r.mem) {
			return w, false
		}
		if worth, _ := planner.PagesWorthAsking(w); worth {
			break
		}
	}
	return w, true
}

// blockWork adds to w the views the CPU folds to read block blk of data:
// an uncompressed body's bytes, folded where they lie; a compressed body's
// buffers at the sizes they declare, decompressed (the host decompresses
// them whichever backend folds them, so only their fold is weighed
// against the GPU). It reads the block's header, not its values; false
// for a message it cannot read.
func blockWork(w *planner.PageWork, data *ipcData, blk ipcBlock, mem memory.Allocator) bool {
	const dictData = 1
	// The header is read where it lies, without ipcData.message's copy of
	// it (which the reads charge to the budget): the mapped file's callers
	// recover a panic, should the file change under them.
	if data.mapped == nil {
		return false
	}
	msg, err := parseIPCMessage(data.mapped[blk.offset:blk.offset+blk.meta+blk.body], blk, false)
	if err != nil {
		return false
	}
	rb := msg.hdr
	if blk.dict {
		at, present, ok := msg.hdr.ref(dictData)
		if !ok || !present {
			return false
		}
		rb = fbTable{b: msg.meta, pos: at}
	}
	dec, err := newBatchDecoder(rb, msg.body, mem, nil, msg.version)
	if err != nil {
		return false
	}
	if dec.codec >= 0 {
		// (Decompressed on the host whichever backend folds the buffers:
		// what the GPU could save is their fold.)
		w.Views += dec.allocates()
	} else {
		w.Views += blk.body
	}
	return true
}

// smallStream reports whether the CPU is estimated to read every batch of
// the IPC stream file s in less than the GPU's start (engine.WithSmallJob),
// its messages walked in place (streamBlocks) and sized as a file's
// (blockWork). False when the engine has no use for it
// (Engine.WantsJobSize), for standard input, and for a stream it cannot
// walk (the read that follows reports what is wrong).
func smallStream(s Source, eng *engine.Engine, mem memory.Allocator) (small bool) {
	if s.Path == Stdin || !eng.WantsJobSize() {
		return false
	}
	data, err := openIPCData(s, mem)
	if err != nil {
		return false
	}
	defer data.close() //nolint:errcheck // (read only)
	if data.mapped == nil {
		return false
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			small = false
		}
	}()
	w := planner.PageWork{Threads: eng.Threads()}
	sized := true
	walked := streamBlocks(data.mapped, func(blk ipcBlock) bool {
		if sized = blockWork(&w, data, blk, mem); !sized {
			return false
		}
		worth, _ := planner.PagesWorthAsking(w)
		return !worth
	})
	worth, _ := planner.PagesWorthAsking(w)
	return walked && sized && !worth
}

// streamBlocks walks the messages of the IPC stream b from its start (a
// continuation marker and a length, or the bare length of the pre-1.0
// format; then the metadata and the body), calling f with each dictionary
// and record batch as a block, until f returns false or the stream ends
// (its end marker, or its last byte). False for framing it cannot read, a
// first message that is not a schema, or another message that is not a
// batch.
func streamBlocks(b []byte, f func(ipcBlock) bool) bool {
	for o, first := int64(0), true; o < int64(len(b)); first = false {
		m, ok := streamMessage(b, o)
		switch {
		case !ok:
			return false
		case m.end:
			return true
		case first != (m.kind == headerSchema):
			return false
		case m.kind == headerRecordBatch || m.kind == headerDictionaryBatch:
			if !f(m.block) {
				return true
			}
		case !first:
			return false
		}
		o = m.block.offset + m.block.meta + m.block.body
	}
	return true
}

// streamMsg is a message of an IPC stream found in place (streamMessage).
type streamMsg struct {
	block ipcBlock // where it lies (dict: a dictionary batch)
	meta  []byte   // its metadata, in the stream's bytes
	kind  uint64   // its header's type
	end   bool     // the end marker: no message
}

// streamMessage reads the framing and the metadata's type and body length
// of the message of stream b at offset o; ok is false when they do not
// lie within b.
func streamMessage(b []byte, o int64) (m streamMsg, ok bool) {
	const msgHeaderType, msgBodyLength = 1, 3
	size := int64(len(b))
	if size-o < 4 {
		return m, false
	}
	framing := int64(4)
	n := int64(int32(binary.LittleEndian.Uint32(b[o:])))
	if uint32(n) == continuation {
		if size-o < 8 {
			return m, false
		}
		framing, n = 8, int64(int32(binary.LittleEndian.Uint32(b[o+4:])))
	}
	if n == 0 {
		m.end = true
		return m, true
	}
	if n < 0 || n > size-o-framing {
		return m, false
	}
	m.meta = b[o+framing : o+framing+n]
	msg, ok := fbRoot(m.meta)
	if !ok {
		return m, false
	}
	body, ok1 := msg.scalar(msgBodyLength, 8)
	kind, ok2 := msg.scalar(msgHeaderType, 1)
	if !ok1 || !ok2 || int64(body) < 0 || int64(body) > size-o-framing-n {
		return m, false
	}
	m.kind = kind
	m.block = ipcBlock{offset: o, meta: framing + n, body: int64(body), dict: kind == headerDictionaryBatch}
	return m, true
}

// streamFooter is what a footer would say of the IPC stream in data,
// found by walking its messages in place (streamBlocks): its schema (the
// first message's, copied) and its dictionary and record batches in
// order, ending with the stream. What the list takes is charged (charge)
// before it is made. errNotInPlace when the stream is not mapped, or not
// walked to its end (the stream reader then reads it, and says what is
// wrong).
func streamFooter(data *ipcData, charge func(int64) error) (ft *ipcFooter, err error) {
	b := data.mapped
	if b == nil {
		return nil, errNotInPlace
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil { // (a fault: the file changed; the reader says so)
			ft, err = nil, errNotInPlace
		}
	}()
	const msgHeader = 2
	first, ok := streamMessage(b, 0)
	if !ok || first.end || first.kind != headerSchema {
		return nil, errNotInPlace
	}
	msg, _ := fbRoot(first.meta)
	at, present, ok := msg.ref(msgHeader)
	if !ok || !present {
		return nil, errNotInPlace
	}
	budget := int64(len(first.meta)) / 4
	if checkSchema(fbTable{b: first.meta, pos: at}, &budget) != nil {
		return nil, errNotInPlace
	}
	// Counted first, then charged, then copied and listed: neither a large
	// schema nor a stream of many tiny messages goes past the budget.
	n := 0
	if !streamBlocks(b, func(ipcBlock) bool { n++; return true }) {
		return nil, errNotInPlace
	}
	if err := charge(int64(len(first.meta)) + streamBlockMemory*int64(n)); err != nil {
		return nil, err
	}
	meta := append([]byte(nil), first.meta...)
	ft = &ipcFooter{end: int64(len(b)), schema: fbTable{b: meta, pos: at}, blocks: make([]ipcBlock, 0, n)}
	streamBlocks(b, func(blk ipcBlock) bool { ft.blocks = append(ft.blocks, blk); return true })
	return ft, nil
}

// ipcFooterMemory is what an IPC file's footer takes per byte of it: its
// bytes, and its blocks listed (40 bytes for the 24 of each block).
const ipcFooterMemory = 3

// streamBlockMemory is what a stream's block takes listed (an ipcBlock).
const streamBlockMemory = 40

// run reads the blocks in order, a few record batches ahead, and merges
// their states in order. The calling goroutine reads the mapped file too
// (dictionaries), with faults turned into panics while it does.
func (r *ipcFileRun) run(ctx context.Context, footer *ipcFooter, prog *tracker) (states []agg.State, plans []engine.ColumnPlan, rows int64, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	workers := max(1, r.eng.Threads())
	r.pool = newIPCPool(workers)
	lookahead := workers + 1

	dicts := map[int64]*array.Data{}
	var inflight []*ipcFileBatch
	var progMu sync.Mutex // Options.Progress is never called concurrently
	report := func(pos int64) {
		progMu.Lock()
		defer progMu.Unlock()
		if ctx.Err() == nil {
			prog.to(pos)
		}
	}
	defer func() {
		if p := recover(); p != nil {
			err = faultError(p)
		}
		r.pool.close(true)
		for _, b := range inflight {
			b.release()
		}
		for _, d := range dicts {
			d.Release()
		}
		for id, n := range r.dictCharged {
			r.budget.Release(n)
			delete(r.dictCharged, id)
		}
	}()

	states = make([]agg.State, len(r.leaves))
	plans = make([]engine.ColumnPlan, len(r.leaves))
	for k, l := range r.leaves {
		states[k] = agg.New(l.Kind.Family(), r.aggs)
	}
	// mergeHead waits for the first batch in flight, merges its states and
	// releases it.
	mergeHead := func() error {
		b := inflight[0]
		select {
		case <-b.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := b.err; err != nil {
			if ctx.Err() == nil {
				err = fmt.Errorf("record batch %d: %w", b.index, err)
			}
			return err
		}
		for k := range b.wins {
			for w := range b.wins[k] {
				// Windows count rows from their batch's first row.
				b.wins[k][w].ShiftRows(rows)
				states[k].Merge(&b.wins[k][w])
				b.plan[k].Measured += b.took[k][w]
			}
			plans[k].Add(b.plan[k])
		}
		rows += b.rec.NumRows()
		b.release()
		inflight = inflight[1:]
		report(b.block.offset + b.block.meta + b.block.body)
		return nil
	}
	// charge charges n bytes for what, in file order: when they are not
	// free, the batches in flight are merged (and give theirs back) one by
	// one before it waits for the memory of other reads.
	charge := func(what string, n int64) error {
		for {
			ok, err := r.budget.TryAcquire(what, n)
			if err != nil || ok {
				return err
			}
			if len(inflight) == 0 {
				return r.budget.Acquire(ctx, what, n)
			}
			if err := mergeHead(); err != nil {
				return err
			}
		}
	}
	next, batches := 0, 0
	for {
		for len(inflight) < lookahead && next < len(footer.blocks) {
			if err := ctx.Err(); err != nil {
				return nil, nil, 0, err
			}
			blk := footer.blocks[next]
			next++
			if blk.dict {
				if err := r.dictionary(ctx, blk, dicts, charge); err != nil {
					return nil, nil, 0, err
				}
				continue
			}
			b := &ipcFileBatch{block: blk, index: batches, budget: r.budget, pending: 1, tasks: 1, done: make(chan struct{}), report: report}
			if err := r.charge(b, charge); err != nil {
				b.release()
				return nil, nil, 0, err
			}
			b.dicts = make(map[int64]*array.Data, len(dicts))
			for id, d := range dicts {
				d.Retain()
				b.dicts[id] = d
			}
			batches++
			inflight = append(inflight, b)
			r.pool.push(func() error { return r.decode(ctx, b) }, b.finish)
		}
		if len(inflight) == 0 {
			break
		}
		if err := mergeHead(); err != nil {
			return nil, nil, 0, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, 0, err
	}
	return states, plans, rows, nil
}

// dictionary decodes a dictionary batch into dicts (a delta extends the
// dictionary of its id, another batch replaces it), stopping with ctx's
// error when ctx is done. What it allocates is charged with charge (in file
// order), and held while the file is read.
func (r *ipcFileRun) dictionary(ctx context.Context, blk ipcBlock, dicts map[int64]*array.Data, charge func(string, int64) error) error {
	const dictID, dictData, dictIsDelta = 0, 1, 2
	msg, charged, err := r.readMessage(blk, "a dictionary batch read", charge)
	defer r.budget.Release(charged)
	if err != nil {
		return err
	}
	defer msg.done()
	id, ok1 := msg.hdr.scalar(dictID, 8)
	delta, ok2 := msg.hdr.scalar(dictIsDelta, 1)
	at, present, ok3 := msg.hdr.ref(dictData)
	if !ok1 || !ok2 || !ok3 || !present {
		return errors.New("corrupt Arrow IPC file: malformed dictionary batch")
	}
	dt, ok := r.dtypes[int64(id)]
	if !ok {
		return fmt.Errorf("corrupt Arrow IPC file: a dictionary batch of id %d, which no field has", int64(id))
	}
	dec, err := newBatchDecoder(fbTable{b: msg.meta, pos: at}, msg.body, r.mem, nil, msg.version)
	if err != nil {
		return err
	}
	// Decoded, then copied or concatenated: twice what decoding allocates
	// and the values' bytes in the body.
	need := 2 * (dec.allocates() + int64(len(msg.body)))
	if err := charge("a dictionary batch decoded", need); err != nil {
		return err
	}
	if r.dictCharged == nil {
		r.dictCharged = map[int64]int64{}
	}
	if delta == 0 { // replaces the dictionary of its id
		r.budget.Release(r.dictCharged[int64(id)])
		r.dictCharged[int64(id)] = 0
	}
	r.dictCharged[int64(id)] += need
	data, err := dec.dictionary(ctx, dt)
	if err != nil {
		return err
	}
	// The values are copied out of the block: they outlive it (and a delta
	// is a concatenation anyway).
	values := array.MakeFromData(data)
	data.Release()
	defer values.Release()
	if err := checkArray(values); err != nil {
		return asIPCFile(fmt.Errorf("dictionary %d: %w", int64(id), err))
	}
	parts := []arrow.Array{values}
	if old, ok := dicts[int64(id)]; ok && delta != 0 {
		oa := array.MakeFromData(old)
		defer oa.Release()
		parts = []arrow.Array{oa, values}
	}
	merged, err := array.Concatenate(parts, r.mem)
	if err != nil {
		return fmt.Errorf("dictionary %d: %w", int64(id), runtimeFailure(err))
	}
	if old, ok := dicts[int64(id)]; ok {
		old.Release()
	}
	dicts[int64(id)] = merged.Data().(*array.Data)
	dicts[int64(id)].Retain()
	merged.Release()
	return nil
}

// readMessage reads block blk, charging first the memory the read takes:
// the block's buffer when the file is not mapped, the copy of its metadata
// when it is (ipcData.message).
// It returns what it charged, also on an error.
func (r *ipcFileRun) readMessage(blk ipcBlock, what string, charge func(string, int64) error) (*ipcMessage, int64, error) {
	n := blk.meta
	if r.data.mapped == nil {
		n = blk.meta + blk.body
		n += n / 8 // (see ipcData.read)
	}
	if err := charge(what, n); err != nil {
		return nil, 0, err
	}
	msg, err := r.data.message(blk)
	return msg, n, err
}

// charge reads batch b's message and charges what decoding it allocates,
// before it is decoded, in file order (charge); b holds both until it is
// released.
func (r *ipcFileRun) charge(b *ipcFileBatch, charge func(string, int64) error) error {
	msg, charged, err := r.readMessage(b.block, "a record batch read", charge)
	b.charged += charged
	if err != nil {
		return err
	}
	b.msg = msg
	dec, err := newBatchDecoder(msg.hdr, msg.body, r.mem, nil, msg.version)
	if err != nil {
		return err
	}
	n := dec.allocates()
	for _, l := range r.leaves {
		if l.Err == nil && arrow17.OwnsValidity(l.Type) { // the bitmap its view makes
			n += int64(bitutil.BytesForBits(dec.length))
		}
	}
	if err := charge("a record batch decoded", n); err != nil {
		return err
	}
	b.charged += n
	return nil
}

// decode decodes batch b, cuts its columns into windows and queues their
// folding.
func (r *ipcFileRun) decode(ctx context.Context, b *ipcFileBatch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	msg := b.msg
	dec, err := newBatchDecoder(msg.hdr, msg.body, r.mem, b.dicts, msg.version)
	if err != nil {
		return err
	}
	if b.rec, err = dec.record(ctx, r.schema, r.fields); err != nil {
		return err
	}
	for i, col := range b.rec.Columns() {
		if err := checkArray(col); err != nil {
			return asIPCFile(fmt.Errorf("column %q: %w", b.rec.ColumnName(i), err))
		}
	}
	b.cols = make([]arrow17.Column, len(r.leaves))
	b.wins = make([][]agg.State, len(r.leaves))
	b.took = make([][]time.Duration, len(r.leaves))
	b.plan = make([]engine.ColumnPlan, len(r.leaves))
	for k, l := range r.leaves {
		c := &b.cols[k]
		if err := arrow17.Extract(c, b.rec, l, r.mem); err != nil {
			return err
		}
		c.Row = 0 // shifted when merged
		st := agg.New(l.Kind.Family(), r.aggs)
		dec := r.eng.PlanView(ctx, &c.View, &st)
		b.plan[k] = engine.ColumnPlan{Source: engine.SourceArrow, Backend: dec.Backend, GPUFraction: dec.GPUFraction,
			Bytes: c.ByteSize(), Estimated: dec.Estimate, Reason: dec.Reason()}
		n := (c.Len + engine.MorselSize - 1) / engine.MorselSize
		b.wins[k] = make([]agg.State, n)
		b.took[k] = make([]time.Duration, n)
	}
	b.mu.Lock()
	for k := range r.leaves {
		for w := range b.wins[k] {
			b.pending++
			b.tasks++
			r.pool.push(func() error { return r.fold(ctx, b, k, w) }, b.finish)
		}
	}
	b.mu.Unlock()
	return nil
}

// fold folds window w of leaf k of batch b into a state of its own.
func (r *ipcFileRun) fold(ctx context.Context, b *ipcFileBatch, k, w int) error {
	b.mu.Lock()
	failed := b.err != nil
	b.mu.Unlock()
	if failed {
		return nil
	}
	c := &b.cols[k].View
	lo := w * engine.MorselSize
	v := *c
	v.Offset += lo
	v.ValidityOffset += lo
	v.Row += int64(lo)
	v.Len = min(engine.MorselSize, c.Len-lo)
	if v.Validity != nil {
		v.NullCount = v.Len - bitutil.CountSetBits(v.Validity, v.ValidityOffset, v.Len)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	st := agg.New(r.leaves[k].Kind.Family(), r.aggs)
	start := time.Now()
	if r.data.mapped != nil {
		if d := r.eng.PlanView(ctx, &v, &st); d.GPUFraction > 0 {
			owned := copyView(&v, r.mem)
			defer owned.Release()
		}
	}
	if err := r.eng.UpdateView(ctx, &v, &st); err != nil {
		return err
	}
	b.wins[k][w] = st
	b.took[k][w] = time.Since(start)
	return nil
}

// copyView points v at a copy of the bytes it reads (but a dictionary's,
// which are copied out of the file already) in memory of mem, returned.
func copyView(v *column.View, mem memory.Allocator) *memory.Buffer {
	var parts [][]byte
	cut := func(b []byte, lo, hi int64) []byte { return b[lo:hi:hi] }
	if v.Validity != nil {
		lo := int64(v.ValidityOffset / 8)
		parts = append(parts, cut(v.Validity, lo, bitutil.BytesForBits(int64(v.ValidityOffset+v.Len))))
		v.ValidityOffset -= int(lo) * 8
	}
	switch {
	case v.Dict != nil:
		w := int64(v.IndexKind.Width())
		parts = append(parts, cut(v.Values, int64(v.Offset)*w, int64(v.Offset+v.Len)*w))
	case v.Kind == column.Bool:
		lo := int64(v.Offset / 8)
		parts = append(parts, cut(v.Values, lo, bitutil.BytesForBits(int64(v.Offset+v.Len))))
	case v.Kind == column.Binary || v.Kind == column.LargeBinary:
		w := int64(4)
		if v.Kind == column.LargeBinary {
			w = 8
		}
		offsets := cut(v.Offsets, int64(v.Offset)*w, int64(v.Offset+v.Len+1)*w)
		end := int64(len(v.Values))
		parts = append(parts, offsets, v.Values[:end:end])
	default:
		w := int64(v.ElemWidth())
		parts = append(parts, cut(v.Values, int64(v.Offset)*w, int64(v.Offset+v.Len)*w))
	}
	n := 0
	for _, p := range parts {
		n += (len(p) + 7) &^ 7
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n)
	all := buf.Bytes()
	for i, p := range parts {
		copy(all, p)
		parts[i] = all[:len(p):len(p)]
		all = all[(len(p)+7)&^7:]
	}
	if v.Validity != nil {
		v.Validity, parts = parts[0], parts[1:]
	}
	switch {
	case v.Kind == column.Bool && v.Dict == nil:
		v.Values, v.Offset = parts[0], v.Offset%8
	case (v.Kind == column.Binary || v.Kind == column.LargeBinary) && v.Dict == nil:
		v.Offsets, v.Values, v.Offset = parts[0], parts[1], 0
	default:
		v.Values, v.Offset = parts[0], 0
	}
	return buf
}
