package core

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/planner"
)

// ErrResidencyClosed is returned by uploads to, and aggregations of data
// uploaded by, a closed Residency.
var ErrResidencyClosed = errors.New("residency is closed")

// Residency keeps the columns of record batches in GPU memory, so that data
// aggregated many times is read at device-memory speed instead of crossing
// the host link at every call. Upload, UploadRecord and UploadTable make
// record batches resident; Resident.Aggregate (or Accumulator.AddResident)
// aggregates them.
//
// Resident columns hold at most the budget of device memory. An upload that
// would exceed it evicts the least recently used columns of other data that
// no call is using; an evicted column is uploaded again at its next use (the
// record batches stay retained on the host, so results never depend on what
// was evicted). Data never evicts its own columns, and a call keeps the
// columns it uses until it ends: on data larger than the budget the columns
// that fit stay resident call after call, and the others, which find no
// room, go through the engine's host path, as does a column larger than the
// whole budget; nothing thrashes. Columns the GPU does not handle (strings,
// binaries, dictionaries) stay on the host and are aggregated where the
// engine's planner puts them. With DeviceAuto, columns so small that the CPU
// is done before a GPU launch returns stay on the host too.
//
// A Residency is safe for concurrent use by many goroutines; Close it to free
// the device memory.
type Residency struct {
	e      *Engine
	gpu    backend.ResidentGPU
	budget int64

	mu    sync.Mutex
	ready sync.Cond // broadcast when an upload or a free ends
	lru   list.List // *residentColumn on the device, least recently used first
	used  int64     // bytes on the device and of uploads in flight
	// freeing is the bytes of columns taken off the books whose device
	// memory is being freed (outside r.mu): they count against the budget
	// until the frees end, so an upload meanwhile cannot exceed it.
	freeing int64
	closed  bool // Close was called
	stats   ResidencyStats
}

// ResidencyStats are the counters of a Residency.
type ResidencyStats struct {
	Budget   int64 // bytes of device memory the resident columns may hold
	Resident int64 // bytes they hold now, uploads and frees in progress included
	Columns  int   // column chunks on the device now
	// Uploads counts the column chunks copied to the device, first uploads
	// and uploads again after an eviction (Reuploads) alike.
	Uploads, Reuploads int64
	Evictions          int64 // column chunks evicted to make room
	Hits               int64 // uses of a column chunk found on the device
	// HostUses counts the uses of column chunks the GPU handles that went
	// through the host path: larger than the budget, no room, a failed
	// upload, or too small to gain from the GPU.
	HostUses int64
}

// NewResidency returns a Residency of the engine's GPU backend that keeps at
// most budget bytes of columns in device memory. It fails, with an error
// wrapping backend.ErrNoGPU, when the engine has no GPU backend that keeps columns
// resident.
func (e *Engine) NewResidency(budget int64) (*Residency, error) {
	if budget <= 0 {
		return nil, fmt.Errorf("residency budget of %d bytes: want a positive number", budget)
	}
	if e.gpu == nil {
		return nil, fmt.Errorf("%w: the engine aggregates on the CPU only (device %s)", backend.ErrNoGPU, e.device)
	}
	if err := e.probe(); err != nil {
		return nil, fmt.Errorf("%w: %w", backend.ErrNoGPU, err)
	}
	gpu, ok := e.gpu.(backend.ResidentGPU)
	if !ok {
		return nil, fmt.Errorf("%w: the %s backend keeps no columns in device memory", backend.ErrNoGPU, e.gpu.Name())
	}
	r := &Residency{e: e, gpu: gpu, budget: budget}
	r.ready.L = &r.mu
	return r, nil
}

// Stats returns the residency's counters.
func (r *Residency) Stats() ResidencyStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	s.Budget, s.Resident, s.Columns = r.budget, r.used+r.freeing, r.lru.Len()
	return s
}

// Close frees the device memory of every resident column (of columns a call
// is using, when the call ends). Uploads and aggregations fail with
// ErrResidencyClosed afterwards. Each Resident still holds its record
// batches until it is released. Close always returns nil; later calls do
// nothing.
func (r *Residency) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	var free []dropped
	for el := r.lru.Front(); el != nil; {
		next := el.Next()
		if c := el.Value.(*residentColumn); c.pins == 0 {
			free = append(free, r.drop(c))
		}
		el = next
	}
	r.mu.Unlock()
	r.free(free)
	return nil
}

// Resident is record batches of one set of columns uploaded by a
// Residency: their columns the GPU handles are kept in device memory (within
// the budget), the others on the host. Rows count from 0 at the first row of
// the first batch. A front end makes one (NewResident), adds its batches'
// views (AddBatch), then uploads them (Load); the views' memory is the
// front end's, kept alive until the Resident's last reference is released
// (then OnFree runs). It is safe for concurrent use.
type Resident struct {
	r       *Residency
	cols    []Column
	index   map[string]int // column name -> index in cols
	batches []residentBatch
	rows    int64
	onFree  func()

	// Under r.mu.
	refs  int64 // the callers' references and the calls in progress
	calls int64 // aggregation calls started
}

// residentBatch is one record batch of a Resident.
type residentBatch struct {
	views []*column.View    // per column; nil for an unsupported one. Row: the batch's first row
	dev   []*residentColumn // per column; nil where the GPU does not handle the column
}

// residentColumn is the Residency's record of one column chunk a
// backend.ResidentGPU handles: on the device (dev, a backend.DeviceColumn)
// or not, its pins, its place in the LRU list and its contest. Its fields are
// guarded by the Residency's mutex.
type residentColumn struct {
	owner *Resident
	view  *column.View         // its batch's view (the front end's memory)
	bytes int64                // device memory it takes: ResidentGPU.DeviceBytes
	dev   backend.DeviceColumn // nil when not on the device
	elem  *list.Element
	pins  int   // calls using it; never evicted while positive
	busy  bool  // an upload is in progress
	since int64 // the Resident's call count at its last upload
	// evicted: it was evicted since its last upload.
	evicted bool
	// host, when set, is why the column is never made resident.
	host string
	// race, when set, decides each call's backend by measurement
	// (planner.Contest).
	race *planner.Contest
}

// NewResident starts data of columns cols to make resident: add its
// batches with AddBatch, then Load it. onFree, when not nil, runs once the
// last reference is released (after the device columns are freed): it
// releases the memory of the views. Release the Resident when done, loaded
// or not.
func (r *Residency) NewResident(cols []Column, onFree func()) (*Resident, error) {
	res := &Resident{r: r, cols: cols, refs: 1, onFree: onFree}
	res.index = make(map[string]int, len(cols))
	for i, c := range cols {
		res.index[c.Name] = i
	}
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return nil, ErrResidencyClosed
	}
	return res, nil
}

// AddBatch adds a record batch of rows rows: views[i] is column i's view
// (nil for an unsupported column), its Row counted from the batch's first
// row. The views must stay valid until OnFree.
func (res *Resident) AddBatch(ctx context.Context, rows int64, views []*column.View) error {
	r := res.r
	if len(views) != len(res.cols) {
		return fmt.Errorf("a batch of %d columns for resident data of %d", len(views), len(res.cols))
	}
	b := residentBatch{views: make([]*column.View, len(res.cols)), dev: make([]*residentColumn, len(res.cols))}
	for i, c := range res.cols {
		if !c.Supported() {
			continue
		}
		v := views[i]
		if v == nil {
			return fmt.Errorf("column %q: no view in the batch", c.Name)
		}
		v.Row += res.rows
		b.views[i] = v
		if !r.gpu.Handles(v) {
			continue
		}
		rc := &residentColumn{owner: res, view: v, bytes: r.gpu.DeviceBytes(v)}
		switch {
		case rc.bytes > r.budget:
			rc.host = fmt.Sprintf("not resident: %s on the device is more than the budget of %s",
				byteSize(rc.bytes), byteSize(r.budget))
		case r.e.device == DeviceAuto && r.e.cpuCertain(ctx, v):
			rc.host = "not resident: the CPU is done before a GPU launch returns"
		case r.e.device == DeviceAuto && r.e.contested(ctx, v):
			rc.race = &planner.Contest{}
		}
		b.dev[i] = rc
	}
	res.batches = append(res.batches, b)
	res.rows += rows
	return nil
}

// Load copies the columns the GPU handles to device memory, evicting least
// recently used columns of other data when the budget requires it; columns
// that do not fit are uploaded at a later use if there is room then.
func (res *Resident) Load(ctx context.Context) error {
	r := res.r
	// The columns stay pinned until the last one is uploaded: uploads of
	// other data at the same time do not evict them meanwhile.
	var pinned []*residentColumn
	defer func() { r.unpin(pinned) }()
	for bi := range res.batches {
		for _, c := range res.batches[bi].dev {
			if c == nil || c.host != "" {
				continue
			}
			u, err := r.acquire(ctx, c, 0)
			if err != nil {
				return err
			}
			if u.kind != useHost {
				pinned = append(pinned, c)
			}
		}
	}
	return nil
}

// Rows is the number of rows of the record batches.
func (res *Resident) Rows() int64 { return res.rows }

// Retain adds a reference: one more Release is needed to free the data.
func (res *Resident) Retain() {
	res.r.mu.Lock()
	defer res.r.mu.Unlock()
	if res.refs > 0 {
		res.refs++
	}
}

// Release drops a reference. The last one frees the device columns and
// releases the record batches (once calls in progress end); further calls
// do nothing.
func (res *Resident) Release() {
	res.r.mu.Lock()
	if res.refs <= 0 {
		res.r.mu.Unlock()
		return
	}
	res.deref() // unlocks
}

// deref drops a reference with r.mu held, and unlocks it: the last reference
// frees everything.
func (res *Resident) deref() {
	r := res.r
	res.refs--
	if res.refs > 0 {
		r.mu.Unlock()
		return
	}
	var free []dropped
	for _, b := range res.batches {
		for _, c := range b.dev {
			if c != nil && c.dev != nil {
				free = append(free, r.drop(c))
			}
		}
	}
	r.mu.Unlock()
	r.free(free)
	res.batches = nil
	if res.onFree != nil {
		res.onFree()
		res.onFree = nil
	}
}

// begin starts an aggregation call: it takes a reference and returns the
// call's number.
func (res *Resident) begin() (int64, error) {
	r := res.r
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case res.refs <= 0:
		return 0, errors.New("aggregating a released Resident")
	case r.closed:
		return 0, ErrResidencyClosed
	}
	res.refs++
	res.calls++
	return res.calls, nil
}

// end ends an aggregation call: it unpins its columns and drops its
// reference.
func (res *Resident) end(pinned []*residentColumn) {
	res.r.unpin(pinned)
	res.r.mu.Lock()
	res.deref()
}

// useKind is how a call uses a column the GPU handles.
type useKind uint8

const (
	useHost     useKind = iota // the host path
	useHit                     // found on the device
	useUploaded                // uploaded by this call (first time)
	useAgain                   // uploaded again by this call after an eviction
)

// use is the outcome of acquire.
type use struct {
	kind useKind
	dev  backend.DeviceColumn
	ago  int64  // useHit: calls since the upload
	why  string // useHost: why not on the device
}

// acquire makes c resident for call if it can, evicting unpinned columns of
// other data as needed, and pins it: on success with a use other than useHost the caller
// unpins it when its call ends. Call 0 is the upload, which counts neither
// as a hit nor as a host use.
func (r *Residency) acquire(ctx context.Context, c *residentColumn, call int64) (use, error) {
	r.mu.Lock()
	var victims []dropped
	for {
		for c.busy {
			r.ready.Wait()
		}
		if r.closed {
			r.mu.Unlock()
			return use{}, ErrResidencyClosed
		}
		if c.dev != nil {
			c.pins++
			r.lru.MoveToBack(c.elem)
			countUse(&r.stats.Hits, call)
			u := use{kind: useHit, dev: c.dev, ago: call - c.since}
			r.mu.Unlock()
			return u, nil
		}
		if c.host != "" {
			countUse(&r.stats.HostUses, call)
			r.mu.Unlock()
			return use{why: c.host}, nil
		}
		var room roomOutcome
		victims, room = r.makeRoom(c.bytes, c.owner)
		if room == roomFits {
			break
		}
		if room == roomNone {
			countUse(&r.stats.HostUses, call)
			r.mu.Unlock()
			return use{why: fmt.Sprintf("not resident: no room for %s in the budget of %s, held by columns in use",
				byteSize(c.bytes), byteSize(r.budget))}, nil
		}
		r.ready.Wait() // roomAfterFrees: frees in progress end soon
	}
	c.busy = true
	r.used += c.bytes
	r.mu.Unlock()
	r.free(victims)

	dev, err := r.gpu.UploadView(ctx, c.view)

	r.mu.Lock()
	defer r.mu.Unlock()
	c.busy = false
	r.ready.Broadcast()
	if err != nil {
		r.used -= c.bytes
		if cerr := ctx.Err(); cerr != nil {
			return use{}, fmt.Errorf("uploading a %s column: %w", c.view.Type, err)
		}
		countUse(&r.stats.HostUses, call)
		return use{why: fmt.Sprintf("not resident: the upload failed (%v)", err)}, nil
	}
	if r.closed {
		r.used -= c.bytes
		dev.Free()
		return use{}, ErrResidencyClosed
	}
	c.dev, c.elem, c.since, c.pins = dev, r.lru.PushBack(c), call, c.pins+1
	r.stats.Uploads++
	u := use{kind: useUploaded, dev: dev}
	if c.evicted {
		r.stats.Reuploads++
		u.kind = useAgain
	}
	c.evicted = false
	return u, nil
}

// roomOutcome is what makeRoom found.
type roomOutcome uint8

const (
	roomFits       roomOutcome = iota // the bytes fit, after the evictions returned
	roomAfterFrees                    // they fit once the frees in progress end
	roomNone                          // columns in use hold the room
)

// makeRoom evicts least recently used columns, neither in use nor of owner
// (whose call or upload needs the room), until need more bytes fit in the
// budget, and returns them to free (after r.mu is released). Columns being
// freed count against the budget. It evicts nothing when the bytes cannot
// fit, or fit only once the frees in progress end; r.mu held.
func (r *Residency) makeRoom(need int64, owner *Resident) ([]dropped, roomOutcome) {
	over := r.used + r.freeing + need - r.budget
	if over <= 0 {
		return nil, roomFits
	}
	var evictable int64
	for el := r.lru.Front(); el != nil && evictable < over; el = el.Next() {
		if c := el.Value.(*residentColumn); c.pins == 0 && c.owner != owner {
			evictable += c.bytes
		}
	}
	switch {
	case evictable+r.freeing < over:
		return nil, roomNone
	case evictable < over:
		return nil, roomAfterFrees
	}
	var victims []dropped
	// The caller frees its victims before it uploads: their bytes are room
	// for it, though not for others until the frees end.
	for el := r.lru.Front(); el != nil && over > 0; {
		next := el.Next()
		if c := el.Value.(*residentColumn); c.pins == 0 && c.owner != owner {
			over -= c.bytes
			victims = append(victims, r.drop(c))
			c.evicted = true
			r.stats.Evictions++
		}
		el = next
	}
	return victims, roomFits
}

// dropped is a device column taken off the books, to free.
type dropped struct {
	dev   backend.DeviceColumn
	bytes int64
}

// drop takes c off the device's books and returns it to free (with
// Residency.free, after r.mu is released): until then its bytes count as
// freeing; r.mu held.
func (r *Residency) drop(c *residentColumn) dropped {
	d := dropped{dev: c.dev, bytes: c.bytes}
	r.lru.Remove(c.elem)
	c.dev, c.elem = nil, nil
	r.used -= c.bytes
	r.freeing += c.bytes
	return d
}

// free frees dropped device columns, then takes their bytes off the
// budget's count of frees in progress; r.mu not held.
func (r *Residency) free(cols []dropped) {
	if len(cols) == 0 {
		return
	}
	var n int64
	for _, d := range cols {
		d.dev.Free()
		n += d.bytes
	}
	r.mu.Lock()
	r.freeing -= n
	r.ready.Broadcast()
	r.mu.Unlock()
}

// unpin ends a call's use of its columns: after Close they are freed.
func (r *Residency) unpin(cols []*residentColumn) {
	if len(cols) == 0 {
		return
	}
	var free []dropped
	r.mu.Lock()
	for _, c := range cols {
		c.pins--
		if c.pins == 0 && r.closed && c.dev != nil {
			free = append(free, r.drop(c))
		}
	}
	r.mu.Unlock()
	r.free(free)
}

// countHostUse counts a use of a column chunk the GPU handles through the
// host path, outside acquire.
func (r *Residency) countHostUse(call int64) {
	r.mu.Lock()
	countUse(&r.stats.HostUses, call)
	r.mu.Unlock()
}

// countUse adds a use by call to the counter n (the upload, call 0, is no
// use).
func countUse(n *int64, call int64) {
	if call > 0 {
		*n++
	}
}

// AddResident folds the record batches of res into the states, after the
// rows added so far, like Add of each batch: resident columns are aggregated
// on the device; the others go where the planner puts them. res must come
// from a Residency of the accumulator's engine.
func (a *Accumulator) AddResident(ctx context.Context, res *Resident) error {
	r := res.r
	if r.e != a.e {
		return errors.New("resident data of another engine's residency")
	}
	call, err := res.begin()
	if err != nil {
		return err
	}
	var pinned []*residentColumn
	defer func() { res.end(pinned) }()

	leaf := make([]int, len(a.cols)) // the resident column of each of a's
	for i, l := range a.cols {
		leaf[i] = -1
		if !l.Supported() {
			continue
		}
		k, ok := res.index[l.Name]
		if !ok { // an element column ("tags[]"): resident data keeps the columns of its rows
			return fmt.Errorf("column %q: not in the resident data", l.Name)
		}
		leaf[i] = k
	}
	cal := planner.Defaults(a.e.threads)
	if a.e.gpu != nil {
		cal = a.e.calibration(ctx)
	}
	base := a.rows
	var (
		views []column.View // copies, with rows from the accumulator's first
		work  []devWork
		notes = make([]string, len(a.cols))
		races = make([]planner.ContestNote, len(a.cols))
		raced []*residentColumn // of each host view: its contest's column, if it is one
	)
	for bi := range res.batches {
		b := &res.batches[bi]
		views, raced = views[:0], raced[:0]
		a.views, a.ptrs, a.active, work = a.views[:0], a.ptrs[:0], a.active[:0], work[:0]
		for i, k := range leaf {
			if k < 0 {
				continue
			}
			notes[i], races[i] = "", planner.ContestNote{}
			var race *residentColumn
			if c := b.dev[k]; c != nil && a.e.gpuTakes(c.view, &a.states[i]) {
				if c.race != nil {
					races[i] = c.race.Pick()
				}
				if !races[i].Contested || races[i].Device {
					start := time.Now()
					u, err := r.acquire(ctx, c, call)
					if err != nil {
						return fmt.Errorf("column %q: %w", a.cols[i].Name, err)
					}
					if u.kind != useHost {
						pinned = append(pinned, c)
						work = append(work, devWork{leaf: i, col: c, use: u, took: time.Since(start)})
						continue
					}
					notes[i], races[i] = u.why, planner.ContestNote{}
				} else {
					r.countHostUse(call)
					race = c
				}
			}
			v := *b.views[k]
			v.Row += base
			views = append(views, v)
			raced = append(raced, race)
			a.ptrs = append(a.ptrs, &a.states[i])
			a.active = append(a.active, i)
		}
		for j := range views {
			a.views = append(a.views, &views[j])
		}
		if err := a.addBatch(ctx, base, work, notes, races, raced, cal); err != nil {
			return err
		}
	}
	a.rows = base + res.rows
	return nil
}

// devWork is a resident column of a batch to aggregate on the device.
type devWork struct {
	leaf int
	col  *residentColumn
	use  use
	took time.Duration // the upload, when there was one, then the update too
}

// addBatch aggregates one resident batch: devWork on the device while the
// host views (a.views, a.ptrs, a.active) go through the planner, except
// those of contested columns that this call runs on the host copy (raced),
// which the CPU takes; it records the plans and the contests' times.
func (a *Accumulator) addBatch(ctx context.Context, base int64, work []devWork, notes []string, races []planner.ContestNote,
	raced []*residentColumn, cal planner.Calibration) error {
	var wg sync.WaitGroup
	var devErr error
	if len(work) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			devErr = a.updateDevice(ctx, base, work)
		}()
	}
	var hostErr error
	var plan []planner.Decision
	if len(a.views) > 0 {
		plan = a.e.planBatch(ctx, a.views, a.ptrs)
		for k, c := range raced {
			if c != nil && plan[k].Backend != planner.CPU {
				plan[k] = planner.Plan([]planner.Column{planner.ColumnOf(a.views[k])}, cal,
					planner.Options{Threads: a.e.threads, Force: planner.ForceCPU})[0]
			}
		}
		a.took = append(a.took[:0], make([]time.Duration, len(a.views))...)
		if err := a.e.execute(ctx, a.views, a.ptrs, plan, a.took); err != nil {
			hostErr = fmt.Errorf("aggregating %s: %w", a.names(), err)
		}
	}
	wg.Wait()
	if err := errors.Join(devErr, hostErr); err != nil {
		return err
	}
	a.recordContests(work, raced, plan)
	for k, i := range a.active {
		q := decided(plan[k], a.e.locate(a.views[k]), a.views[k].ByteSize(), a.took[k], notes[i])
		if q.why.race = races[i]; races[i].Contested {
			q.why.hasDec = false // the CPU by measurement, not by the planner
		}
		a.plans[i].Add(q)
	}
	for _, w := range work {
		bytes := w.col.view.ByteSize()
		u := w.use
		u.dev = nil // the plan holds no device column
		q := ColumnPlan{Source: SourceArrow, Backend: planner.GPU, Location: planner.Device, GPUFraction: 1,
			Bytes: bytes, Estimated: planner.DeviceEstimate(bytes, w.use.kind != useHit, cal), Measured: w.took,
			why: planWhy{resident: true, use: u, race: races[w.leaf]}}
		if cal.HasGPU() {
			q.why.read = cal.DeviceRead
		}
		a.plans[w.leaf].Add(q)
	}
	return nil
}

// recordContests adds this batch's times to the contests of its columns:
// a device column's own call (not one that uploaded it), and a host view's
// share, by bytes, of the CPU's time for the batch's CPU views.
func (a *Accumulator) recordContests(work []devWork, raced []*residentColumn, plan []planner.Decision) {
	for _, w := range work {
		if w.col.race != nil && w.use.kind == useHit {
			w.col.race.Record(true, w.took)
		}
	}
	var cpuBytes int64
	for k, v := range a.views {
		if plan[k].Backend == planner.CPU {
			cpuBytes += v.ByteSize()
		}
	}
	for k, c := range raced {
		if c != nil && cpuBytes > 0 {
			c.race.Record(false, time.Duration(float64(a.took[k])*float64(a.views[k].ByteSize())/float64(cpuBytes)))
		}
	}
}

// updateDevice folds the resident columns of work into their states, one
// after the other (a GPU backend runs its calls one at a time); base is the
// accumulator's row of the resident data's first row.
func (a *Accumulator) updateDevice(ctx context.Context, base int64, work []devWork) error {
	for j := range work {
		w := &work[j]
		start := time.Now()
		if err := w.use.dev.Update(ctx, &a.states[w.leaf], base+w.col.view.Row); err != nil {
			return fmt.Errorf("aggregating column %q on the %s: %w", a.cols[w.leaf].Name, a.e.gpu.Name(), err)
		}
		w.took += time.Since(start)
	}
	return nil
}

// residentReason is the plan's reason for a column aggregated on the device;
// read is the device's read rate (0: not known).
func residentReason(u use, read float64) string {
	var why string
	switch u.kind {
	case useHit:
		calls := "calls"
		if u.ago == 1 {
			calls = "call"
		}
		why = fmt.Sprintf("resident on the GPU (uploaded %d %s ago)", u.ago, calls)
	case useAgain:
		why = "evicted: uploaded again, resident on the GPU from now on"
	default:
		why = "uploaded now, resident on the GPU from now on"
	}
	if read > 0 {
		why += fmt.Sprintf(", read at %.0f GB/s", read/1e9)
	}
	return why
}

// byteSize formats a number of bytes with a binary unit.
func byteSize(n int64) string {
	const unit = 1 << 10
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, i := float64(n)/unit, 0
	for f >= unit && i < 4 {
		f /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", f, "KMGTP"[i])
}
