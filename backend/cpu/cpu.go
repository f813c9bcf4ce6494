package cpu

import (
	"context"
	"sync"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/column"
)

var _ backend.Backend = (*CPU)(nil)

// newState is the empty state of a family without the ordered aggregates.
func newState(f column.Family) agg.State { return agg.New(f, 0) }

// CPU is the pure Go backend: each view is cut into morsels of MorselSize
// elements, morsels are aggregated by up to Threads goroutines, and the morsel
// states of a view are merged in order.
type CPU struct {
	Threads int
	scratch sync.Pool // *Scratch
}

// Name implements Backend.
func (c *CPU) Name() string { return "cpu" }

type task struct {
	col    int
	lo, hi int
}

// Scratch is the work of one Compute: the morsels of its views and their
// states, until Commit merges them and Done hands the scratch back.
type Scratch struct {
	views   []*column.View
	ordered []bool         // per view: its state tracks the ordered aggregates
	counts  []bool         // per view: its state tracks the counts alone
	noSum   []bool         // per view: its state does not track the sum
	needs   []statsNeed    // per view: the statistics its state asks for
	seeds   []*agg.Sketch  // per view: its state's sketch when Compute began
	wide    []*column.View // per view: its dictionary widened, for a dictionary of narrow values (widen.go)
	tasks   []task
	states  []agg.State
	accs    []morselAccs
	errs    []error
}

// Update implements Backend. The states are left untouched when it fails.
func (c *CPU) Update(ctx context.Context, views []*column.View, states []*agg.State) error {
	sc, err := c.Compute(ctx, views, states)
	if err == nil {
		sc.Commit(states)
	}
	c.Done(sc)
	return err
}

// Done returns the scratch of a Compute to the pool.
func (c *CPU) Done(sc *Scratch) {
	clear(sc.views) // drop references to the caller's data
	clear(sc.seeds)
	clear(sc.wide)
	c.scratch.Put(sc)
}

// Compute aggregates the morsels of views (states give their Ordered flags,
// and their sketches seed the morsels': statsAccs.sketchOf) into the
// scratch's morsel states, leaving the states alone; Commit merges them into
// the same states. The caller hands the scratch back with Done, also when Compute
// fails. The engine runs it beside a GPU's share of a batch, so that a failed
// batch changes no state at all.
func (c *CPU) Compute(ctx context.Context, views []*column.View, states []*agg.State) (*Scratch, error) {
	sc, _ := c.scratch.Get().(*Scratch)
	if sc == nil {
		sc = &Scratch{}
	}
	sc.views = append(sc.views[:0], views...) // the workers read the scratch copy
	sc.ordered, sc.counts, sc.noSum, sc.needs = sc.ordered[:0], sc.counts[:0], sc.noSum[:0], sc.needs[:0]
	sc.seeds = sc.seeds[:0]
	for i, s := range states {
		sc.ordered = append(sc.ordered, s.Ordered())
		sc.counts = append(sc.counts, countsOnly(s, views[i]))
		sc.noSum = append(sc.noSum, !s.Tracks.Has(agg.Sum))
		need := needOf(s, views[i].Kind.Family())
		sc.needs = append(sc.needs, need)
		var seed *agg.Sketch
		if need.sketch {
			seed = s.Sketch
		}
		sc.seeds = append(sc.seeds, seed)
	}
	sc.wide = sc.wide[:0]
	for i, v := range views {
		var w *column.View
		if v.Dict != nil && narrow(v) && !sc.counts[i] {
			w = widenDict(v.Dict)
		}
		sc.wide = append(sc.wide, w)
	}
	sc.tasks = sc.tasks[:0]
	for i, v := range views {
		for lo := 0; lo < v.Len; lo += MorselSize {
			sc.tasks = append(sc.tasks, task{i, lo, min(lo+MorselSize, v.Len)})
		}
	}
	if cap(sc.states) < len(sc.tasks) {
		sc.states = make([]agg.State, len(sc.tasks))
	}
	sc.states = sc.states[:len(sc.tasks)]
	workers := max(1, min(c.Threads, len(sc.tasks)))
	if len(sc.accs) < workers {
		sc.accs = make([]morselAccs, workers)
	}

	sc.errs = append(sc.errs[:0], make([]error, workers)...)
	if workers == 1 {
		sc.errs[0] = c.run(ctx, sc, 0, 1)
	} else {
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				sc.errs[w] = c.run(ctx, sc, w, workers)
			}(w)
		}
		wg.Wait()
	}
	for _, err := range sc.errs {
		if err != nil {
			return sc, err
		}
	}
	return sc, nil
}

// Commit merges the morsel states of a successful Compute into states, those
// of each view in order: the same result for every thread count.
func (sc *Scratch) Commit(states []*agg.State) {
	for t := range sc.tasks {
		states[sc.tasks[t].col].Merge(&sc.states[t])
	}
}

// countsOnly reports whether the morsels of v need only their validity: s
// tracks no aggregate of the values, and no dictionary value can be null (a
// valid index to a null value is a null).
func countsOnly(s *agg.State, v *column.View) bool {
	return !s.Tracks.Any(agg.Sum|agg.Min|agg.Max|agg.Moments|agg.ApproxDistinct) && (v.Dict == nil || v.Dict.Validity == nil)
}

// pollEvery is how many of its morsels a worker folds between two looks at
// its context: a few milliseconds of the slowest kinds (strings), so that
// cancelling stops every worker within that.
const pollEvery = 4

// run aggregates tasks w, w+stride, ... (a static, size-based assignment).
// The sketch of each morsel is seeded by the worker's previous morsel of the
// same column, the first by the column's state.
func (c *CPU) run(ctx context.Context, sc *Scratch, w, stride int) error {
	accs := &sc.accs[w]
	defer func() { accs.st.seed = nil }()
	col := -1
	for k, t := 0, w; t < len(sc.tasks); k, t = k+1, t+stride {
		// Counted per worker: every worker looks at the context, whatever
		// its share of the task indices.
		if k%pollEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		tk := sc.tasks[t]
		v := sc.views[tk.col]
		st := &sc.states[t]
		fam := v.Kind.Family()
		if sc.counts[tk.col] {
			n := int64(tk.hi - tk.lo)
			if v.Validity != nil {
				n = int64(column.CountSetBits(v.Validity, v.ValidityOffset+tk.lo, tk.hi-tk.lo))
			}
			*st = agg.Counts(fam, n, int64(tk.hi-tk.lo)-n)
			continue
		}
		*st = newState(fam)
		accs.noSum, accs.need = sc.noSum[tk.col], sc.needs[tk.col]
		if tk.col != col {
			col, accs.st.seed = tk.col, sc.seeds[tk.col]
		}
		lo, hi := tk.lo, tk.hi
		if sc.wide[tk.col] != nil { // a dictionary of narrow values
			accs.wideView = *v
			accs.wideView.Dict = sc.wide[tk.col]
			v = &accs.wideView
		} else if narrow(v) {
			accs.wideView = widenMorsel(v, lo, hi, &accs.wide)
			v, lo, hi = &accs.wideView, 0, hi-lo
		}
		if err := accs.updateMorsel(st, v, lo, hi); err != nil {
			return err
		}
		if st.Sketch != nil {
			accs.st.seed = st.Sketch
		}
		if sc.ordered[tk.col] {
			if err := orderedMorsel(st, v, lo, hi); err != nil {
				return err
			}
		}
	}
	return nil
}
