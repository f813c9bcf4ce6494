//go:build cuda

package cuda

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/internal/cudrv"
	"github.com/arrowagg/arrowagg/kernels"
)

var _ backend.GroupGPU = (*Backend)(nil)

// GroupDomain implements backend.GroupGPU: the grouped kernels take domains
// of up to kernels.AggGroupMax keys (and the null key) in shared memory;
// for integer values, the wide kernels take larger ones in device memory,
// up to kernels.AggGroupWideMax keys and a quarter of the rows (a wider
// domain's table, of kernels.AggGroupWideEntryBytes a group, would be
// more to clear and to read back than the rows' keys and values are to
// read).
func (b *Backend) GroupDomain(val column.Kind, rows int) int {
	d := kernels.GroupDomain(val)
	if d <= kernels.AggGroupMax {
		return d
	}
	return max(kernels.AggGroupMax, min(d, rows/4))
}

// HandlesGroup implements backend.GroupGPU: integer keys (a dictionary's
// indices among them), integer and float values, and the aggregates of
// agg.Groups but the ordered ones (the domains it takes: GroupDomain).
func (b *Backend) HandlesGroup(key, val column.Kind, set agg.Set) bool {
	set = agg.Normalize(set)
	return kernels.GroupKeyKind(key) && kernels.GroupKernel(val) != "" && !set.Any(agg.Ordered|agg.GroupsUnsupported)
}

// GroupDevice implements backend.GroupGPU: GroupResident over columns this
// backend uploaded (UploadView); sel may be nil.
func (b *Backend) GroupDevice(ctx context.Context, key backend.DeviceColumn, kmin uint64, groups int,
	sel backend.DeviceColumn, vals []backend.DeviceColumn, set agg.Set) ([]*agg.Groups, error) {
	own := func(c backend.DeviceColumn) (*DeviceColumn, error) {
		d, ok := c.(*DeviceColumn)
		if !ok || d == nil {
			return nil, fmt.Errorf("cuda: grouping a %T, not a column of the CUDA backend", c)
		}
		return d, nil
	}
	k, err := own(key)
	if err != nil {
		return nil, err
	}
	var s *DeviceColumn
	if sel != nil {
		if s, err = own(sel); err != nil {
			return nil, err
		}
	}
	vs := make([]*DeviceColumn, len(vals))
	for i, v := range vals {
		if vs[i], err = own(v); err != nil {
			return nil, err
		}
	}
	return b.GroupResident(ctx, GroupKey{Column: k, Min: kmin, Groups: groups}, s, vs, set)
}

// GroupKey is the key column of a grouped aggregation over a dense domain of
// keys (GroupResident).
type GroupKey struct {
	// Column is the resident key column: integers, or a dictionary's indices
	// (uint8, uint16, uint32 or int32) uploaded as a column of their own.
	Column *DeviceColumn
	// Min is the smallest key (the column's minimum; 0 for a dictionary's
	// indices): its int64 bits for a signed kind.
	Min uint64
	// Groups is the size of the domain: every valid key k has k - Min in
	// [0, Groups) (the column's max - min + 1; a dictionary's length), at
	// most kernels.GroupDomain of each value column's kind.
	Groups int
}

// GroupResident folds resident value columns into the groups of a resident
// key column: result i holds the states of values[i] in key.Groups+1 groups,
// group g the rows whose key is key.Min+g and group key.Groups the rows of a
// null key (SQL's group of NULL). A group's count(*) is its state's Count
// plus NullCount. With sel (a resident boolean column of the same rows), only
// the rows whose selection is true are folded: false and null skip the row,
// as a WHERE clause does. The aggregates are set's (count, sum, mean, min,
// max; the ordered aggregates and the statistics are unsupported), the
// exactness the per-kind kernels': exact integer sums, compensated float
// sums that are the same bits run after run.
//
// Each value column is one launch of its grouped kernel (kernels/group.cuh)
// per window of groups (kernels.GroupLaunchWindow: the domain whose table
// fits a block's shared memory, opted in past 48 KiB where the device
// allows it: on an H100, all of it for up to 2892 integer or 1752 float
// groups; float values of at most 25 groups, the null key's included, in
// one launch of the kernel with a table per thread; float values of more
// groups by the exact kernels, whose sums are the exact sums of the values
// rounded to a sum and its compensation, after a pass over the column for
// its scale, or, when the values span more than the exact sums' 160 bits
// (a millionth beside 1e40), by the kernels of compensated sums:
// kernels.PlanGroupLaunch), and copies back only the groups' states. (An
// exact sum is finite where it is, even when a compensated one, whose
// partial sums overflow in some order, would be infinite.) A domain of more than
// kernels.AggGroupMax keys (integer values only) is one launch of the wide
// kernel: the groups' states in one table in device memory, folded by
// global atomics (exact: integer additions, minima and maxima commute),
// copied back whole. A valid key outside the domain is an error.
func (b *Backend) GroupResident(ctx context.Context, key GroupKey, sel *DeviceColumn, values []*DeviceColumn,
	set agg.Set) ([]*agg.Groups, error) {
	out, err := b.groupResident(ctx, key, sel, values, set)
	if err != nil {
		return nil, fmt.Errorf("cuda: grouping resident columns: %w", err)
	}
	return out, nil
}

func (b *Backend) groupResident(ctx context.Context, key GroupKey, sel *DeviceColumn, values []*DeviceColumn,
	set agg.Set) ([]*agg.Groups, error) {
	if err := checkGroup(b, key, sel, values); err != nil {
		return nil, err
	}
	if set = agg.Normalize(set); set.Any(agg.Ordered) {
		return nil, fmt.Errorf("%s: unsupported by the grouped kernels", (set & agg.Ordered).String())
	}
	out := make([]*agg.Groups, len(values))
	for i, v := range values {
		g, err := agg.NewGroups(v.kind.Family(), set)
		if err != nil {
			return nil, fmt.Errorf("values %d (%s): %w", i, v.typ, err)
		}
		if key.Groups <= kernels.AggGroupMax || key.Column.n == 0 {
			g.Grow(key.Groups + 1) // (the wide kernels' groups grow while the kernel runs: groupWide)
		}
		out[i] = g
	}
	if key.Column.n == 0 {
		return out, nil
	}
	err := b.d.do(func() (err error) {
		defer func() { err = b.settle(err) }()
		cols := append([]*DeviceColumn{key.Column}, values...)
		if sel != nil {
			cols = append(cols, sel)
		}
		for _, c := range cols {
			if !c.live() {
				return errors.New("grouping a freed column")
			}
		}
		for i, v := range values {
			group := b.groupColumn
			if key.Groups > kernels.AggGroupMax {
				group = b.groupWide
			}
			if err := group(ctx, key, sel, v, out[i]); err != nil {
				return fmt.Errorf("values %d (%s): %w", i, v.typ, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkGroup checks the columns of GroupResident: kinds, lengths, backend.
func checkGroup(b *Backend, key GroupKey, sel *DeviceColumn, values []*DeviceColumn) error {
	k := key.Column
	switch {
	case k == nil:
		return errors.New("no key column")
	case !kernels.GroupKeyKind(k.kind):
		return fmt.Errorf("key column of %s: unsupported (integer keys or dictionary indices only)", k.typ)
	case key.Groups < 1:
		return fmt.Errorf("a domain of %d keys: unsupported", key.Groups)
	case len(values) == 0:
		return errors.New("no value column")
	case sel != nil && sel.kind != column.Bool:
		return fmt.Errorf("selection column of %s: not boolean", sel.typ)
	case sel != nil && sel.n != k.n:
		return fmt.Errorf("selection of %d rows for a key column of %d", sel.n, k.n)
	}
	for i, v := range append([]*DeviceColumn{k, sel}, values...) {
		if v != nil && v.b != b {
			return fmt.Errorf("column %d is resident on another backend", i)
		}
	}
	for i, v := range values {
		if v == nil {
			return fmt.Errorf("values %d: no column", i)
		}
		if kernels.GroupKernel(v.kind) == "" {
			return fmt.Errorf("values %d of %s: unsupported by the grouped kernels (integers and floats)", i, v.typ)
		}
		if d := kernels.GroupDomain(v.kind); key.Groups > d {
			return fmt.Errorf("values %d of %s: a domain of %d keys: unsupported (1 to %d)", i, v.typ, key.Groups, d)
		}
		if v.n != k.n {
			return fmt.Errorf("values %d: %d rows for a key column of %d", i, v.n, k.n)
		}
	}
	return nil
}

// planGroup is the grouped kernels' launches over a domain (a variable,
// so that a benchmark may compare other plans).
var planGroup = kernels.PlanGroupLaunch

// errExactLost is a launch of the exact float kernels whose values span
// more than their limbs: it folded nothing.
var errExactLost = errors.New("the values span more than the exact sums' limbs")

// groupExactRuns and groupExactFallbacks count the columns folded by the
// exact float kernels, and those of them folded again by the compensated
// ones (errExactLost).
var groupExactRuns, groupExactFallbacks atomic.Uint64

// groupScaleReuses counts the exact kernels' calls that reused a column's
// scale.
var groupScaleReuses atomic.Uint64

// groupColumn folds value column v into g by planGroup's launches; a
// column that the exact float kernels cannot sum exactly (errExactLost:
// known at the first launch, before anything is merged) is folded by the
// compensated ones instead; device thread.
func (b *Backend) groupColumn(ctx context.Context, key GroupKey, sel, v *DeviceColumn, g *agg.Groups) error {
	d := b.d
	domain := key.Groups + 1
	plan := planGroup(v.kind, domain, d.info.SharedOptin, d.info.SharedPerSM)
	if !plan.Exact {
		return b.groupLaunches(ctx, key, sel, v, g, plan)
	}
	groupExactRuns.Add(1)
	err := errExactLost // (a column whose scale is known not to fit)
	if v.scale == nil || kernels.ExactScaleFits(v.scale[0], v.scale[1]) {
		err = b.groupLaunches(ctx, key, sel, v, g, plan)
	}
	if errors.Is(err, errExactLost) {
		groupExactFallbacks.Add(1)
		err = b.groupLaunches(ctx, key, sel, v, g, kernels.PlanGroupCompensated(v.kind, domain, d.info.SharedOptin, d.info.SharedPerSM))
	}
	return err
}

// groupLaunches folds value column v into g, a launch of plan's kernel per
// window of groups (and per 2^30 rows a block: step), after a launch of
// its scale kernel over the column for the exact float kernels; device
// thread.
func (b *Backend) groupLaunches(ctx context.Context, key GroupKey, sel, v *DeviceColumn, g *agg.Groups,
	plan kernels.GroupLaunch) (err error) {
	d, st := b.d, b.lanes[0].stream
	words := kernels.GroupWords(v.kind)
	domain := key.Groups + 1
	name, window := plan.Kernel, plan.Window
	fn, _, err := d.lazyKernel(name)
	if err != nil {
		return err
	}
	if err := d.optInShared(fn, name, plan.SharedBytes(window)); err != nil {
		return err
	}
	occ, err := fn.MaxActiveBlocksPerMultiProcessor(blockThreads, int64(plan.SharedBytes(window)))
	if err != nil {
		return fmt.Errorf("reading the occupancy of %s: %w", name, err)
	}
	n := uint64(key.Column.n)
	maxGrid := uint64(max(1, occ) * d.info.Multiprocessors)
	grid := min(maxGrid, (n+groupTile-1)/groupTile)
	// A block's counters are 32-bit: a launch gives each block at most
	// 2^30 rows (and a tile).
	step := grid << 30

	partials, err := d.pool.alloc(int64(grid*uint64(words*window+1)) * 8)
	if err != nil {
		return fmt.Errorf("allocating the blocks' tables: %w", err)
	}
	defer d.pool.release(&partials)
	// The launch's ticket, then one per cluster of blocks (group.cuh); for
	// the exact kernels, then the scale's two words and the lost word.
	tickets := 1 + (grid+kernels.AggGroupCluster-1)/kernels.AggGroupCluster
	counters := tickets
	if plan.Exact {
		counters += 3
	}
	ticket, err := d.pool.alloc(int64(counters) * 4)
	if err != nil {
		return fmt.Errorf("allocating the tickets: %w", err)
	}
	defer d.pool.release(&ticket)
	if err := cudrv.MemsetD32Async(ticket.ptr, 0, int64(counters), st); err != nil {
		return fmt.Errorf("zeroing the tickets: %w", err)
	}
	scale := ticket.ptr + cudrv.DevicePtr(4*tickets)
	lost := scale + 8
	res, err := d.pool.alloc(int64(words*window+1) * 8)
	if err != nil {
		return fmt.Errorf("allocating the groups' states: %w", err)
	}
	defer d.pool.release(&res)
	host := b.groupCopy(words*window + 3) // (the states, the launch's word; the scale's words and the lost word)
	defer func() {
		if err != nil {
			// A launch may still run: the buffers go back to the pool
			// (the deferred releases above, run after this) once it is over.
			st.Synchronize() //nolint:errcheck // err says what failed; settle reports the stream's state
		}
	}()
	if plan.Exact {
		if err := b.groupScale(v, plan.Scale, scale); err != nil {
			return err
		}
	}

	for lo := uint64(0); lo < n; lo += step {
		m := min(step, n-lo)
		gr := min(grid, (m+groupTile-1)/groupTile)
		for g0 := 0; g0 < domain; g0 += window {
			if err := ctx.Err(); err != nil {
				return err
			}
			p := min(window, domain-g0)
			args := groupArgs(key, sel, v, lo, m)
			args.U64(uint64(g0)).U64(uint64(p)).Ptr(partials.ptr).Ptr(ticket.ptr).Ptr(res.ptr)
			if plan.Exact {
				args.Ptr(scale).Ptr(lost)
			}
			shared := plan.SharedBytes(p)
			if err := d.groupLaunch(fn, int(gr), shared, st, &args); err != nil {
				return fmt.Errorf("launching %s on %d rows, groups %d to %d (%d blocks): %w", name, m, g0, g0+p-1, gr, err)
			}
			nw := words*p + 1
			if err := d.copyDtoH(unsafe.Pointer(&host[0]), res.ptr, int64(nw)*8, st); err != nil {
				return fmt.Errorf("copying the groups' states to the host: %w", err)
			}
			host[nw], host[nw+1] = 0, 0
			if plan.Exact {
				if err := d.copyDtoH(unsafe.Pointer(&host[nw]), scale, 12, st); err != nil {
					return fmt.Errorf("copying the scale and lost words to the host: %w", err)
				}
			}
			if err := d.syncStream(st); err != nil {
				return fmt.Errorf("running %s: %w", name, err)
			}
			if plan.Exact && v.scale == nil {
				v.scale = &[2]uint32{uint32(host[nw]), uint32(host[nw] >> 32)}
			}
			if host[nw+1] != 0 {
				return errExactLost
			}
			if bad := host[nw-1]; bad != 0 {
				return fmt.Errorf("%d keys outside the domain of %d keys from %s", bad, key.Groups, keyString(key))
			}
			if err := kernels.MergeGroupWords(v.kind, g0, p, host[:nw-1], g); err != nil {
				return err
			}
		}
	}
	return nil
}

// groupScale sets the scale's two words at scale (zeroed) to value column
// v's: those a call before found, or else a launch of scale kernel name
// over the column raises them; device thread.
func (b *Backend) groupScale(v *DeviceColumn, name string, scale cudrv.DevicePtr) error {
	d, st := b.d, b.lanes[0].stream
	if v.scale != nil {
		groupScaleReuses.Add(1)
		for i, w := range v.scale {
			if err := cudrv.MemsetD32Async(scale+cudrv.DevicePtr(4*i), w, 1, st); err != nil {
				return fmt.Errorf("setting the column's scale: %w", err)
			}
		}
		return nil
	}
	fn, _, err := d.lazyKernel(name)
	if err != nil {
		return err
	}
	n := uint64(v.n)
	grid := min(uint64(4*d.info.Multiprocessors), max(1, (n+blockThreads*8-1)/(blockThreads*8)))
	var a cudrv.Params
	a.Ptr(v.values.ptr).U64(v.voff)
	bitmapArg(&a, v, 0)
	a.U64(n).Ptr(scale)
	if err := d.groupLaunch(fn, int(grid), 0, st, &a); err != nil {
		return fmt.Errorf("launching %s on %d rows (%d blocks): %w", name, n, grid, err)
	}
	return nil
}

// groupWide folds value column v (integers) into g by the wide kernel
// (group.cuh): one launch over the rows (per kernels.AggGroupWideRows)
// into a table of every group in device memory, cleared before and copied
// back after, while the host makes g's groups; device thread.
func (b *Backend) groupWide(ctx context.Context, key GroupKey, sel, v *DeviceColumn, g *agg.Groups) (err error) {
	d, st := b.d, b.lanes[0].stream
	name := kernels.GroupWideKernel(v.kind) // (an integer kind: checkGroup)
	fn, _, err := d.lazyKernel(name)
	if err != nil {
		return err
	}
	occ, err := fn.MaxActiveBlocksPerMultiProcessor(blockThreads, 0)
	if err != nil {
		return fmt.Errorf("reading the occupancy of %s: %w", name, err)
	}
	n := uint64(key.Column.n)
	words := kernels.GroupWideWords(key.Groups)
	table, err := d.pool.alloc(int64(words) * 8)
	if err != nil {
		return fmt.Errorf("allocating the groups' table (%d groups): %w", key.Groups+1, err)
	}
	defer d.pool.release(&table)
	host := b.groupCopy(words)
	defer func() {
		if err != nil {
			st.Synchronize() //nolint:errcheck // err says what failed; settle reports the stream's state
		}
	}()
	flags := kernels.GroupWideFlags(g.Tracks())
	maxGrid := uint64(max(1, occ) * d.info.Multiprocessors)
	for lo := uint64(0); lo < n; lo += kernels.AggGroupWideRows {
		if err := ctx.Err(); err != nil {
			return err
		}
		m := min(uint64(kernels.AggGroupWideRows), n-lo)
		grid := min(maxGrid, (m+groupTile-1)/groupTile)
		if err := cudrv.MemsetD32Async(table.ptr, 0, int64(words)*2, st); err != nil {
			return fmt.Errorf("clearing the groups' table: %w", err)
		}
		args := groupArgs(key, sel, v, lo, m)
		args.U64(flags).Ptr(table.ptr)
		if err := d.groupLaunch(fn, int(grid), 0, st, &args); err != nil {
			return fmt.Errorf("launching %s on %d rows, %d groups (%d blocks): %w", name, m, key.Groups+1, grid, err)
		}
		if err := d.copyDtoH(unsafe.Pointer(&host[0]), table.ptr, int64(words)*8, st); err != nil {
			return fmt.Errorf("copying the groups' table to the host: %w", err)
		}
		if g.Len() == 0 {
			// The groups' states on the host, written while the kernel runs
			// (most of their cost is the first writes of fresh pages).
			g.Grow(key.Groups + 1)
		}
		if err := d.syncStream(st); err != nil {
			return fmt.Errorf("running %s: %w", name, err)
		}
		bad, err := kernels.MergeWide(v.kind, key.Groups, host, !v.valid, g)
		if err != nil {
			return err
		}
		if bad != 0 {
			return fmt.Errorf("%d keys outside the domain of %d keys from %s", bad, key.Groups, keyString(key))
		}
	}
	return nil
}

// groupCopy is room for the host's copy of a grouped launch's n words of
// states (a wide table, or a window's groups): page-locked memory (a copy
// at the bus's speed, not staged by the driver), kept for the next call and
// freed by Trim, or Go memory when none can be had; device thread.
func (b *Backend) groupCopy(n int) []uint64 {
	if len(b.groupHost) < 8*n {
		hostFree(b.groupHost) //nolint:errcheck // nothing to do about it
		b.groupHost = nil
		buf, err := hostAlloc(8 * n)
		if err != nil {
			return make([]uint64, n)
		}
		b.groupHost = buf
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b.groupHost[0])), n)
}

// groupTile is the rows of a block's tile in the grouped kernels.
const groupTile = blockThreads * kernels.AggGroupItems

// keyString is key.Min as the key column's kind reads it.
func keyString(key GroupKey) string {
	if key.Column.kind.Family() == column.FamilySigned {
		return fmt.Sprint(int64(key.Min))
	}
	return fmt.Sprint(key.Min)
}

// groupArgs are a grouped kernel's parameters up to its rows (group.cuh
// documents them): rows [lo, lo+n) of the columns.
func groupArgs(key GroupKey, sel, v *DeviceColumn, lo, n uint64) cudrv.Params {
	var a cudrv.Params
	k := key.Column
	a.Ptr(k.values.ptr).U64(k.voff + lo)
	bitmapArg(&a, k, lo)
	a.U64(uint64(specs[k.kind].code)).U64(key.Min).U64(uint64(key.Groups))
	a.Ptr(v.values.ptr).U64(v.voff + lo)
	bitmapArg(&a, v, lo)
	if sel != nil {
		a.Ptr(sel.values.ptr).U64(sel.voff + lo)
		bitmapArg(&a, sel, lo)
	} else {
		a.Ptr(0).U64(0).Ptr(0).U64(0)
	}
	a.U64(n)
	return a
}

// bitmapArg appends c's validity bitmap and the bit of row lo in it (null
// and 0 when c has no nulls).
func bitmapArg(a *cudrv.Params, c *DeviceColumn, lo uint64) {
	if !c.valid {
		a.Ptr(0).U64(0)
		return
	}
	a.Ptr(c.validity.ptr).U64(c.vbit + lo)
}
