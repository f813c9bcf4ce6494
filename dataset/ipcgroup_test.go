package dataset

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/budget"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/report"
)

// IPC files and stream files are grouped in place, a few rows at a time
// copied out of the mapping: the groups are those of the rows in memory,
// to the last bit, for a file of one batch larger than the budget (which
// Arrow's reader, copying the whole batch, could not read), a stream file
// and a zstd file of several batches; with integer, string and two keys,
// strings, decimals, struct fields and the ordered aggregates; its slices
// prepared by one worker or by several.
func TestGroupIPCInPlace(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	var cols []pqCol
	for _, c := range pqCols() {
		if slices.Contains([]string{"i32", "i64_low", "f64", "u64", "day", "point", "price", "flag", "word"}, c.field.Name) {
			cols = append(cols, c)
		}
	}
	const rows = 60_000
	rec := pqRecord(mem, cols, rows, 31)
	defer rec.Release()
	dir := t.TempDir()
	files := map[string]string{"one batch": filepath.Join(dir, "one.arrow"), "stream": filepath.Join(dir, "s.arrows"), "zstd": filepath.Join(dir, "z.arrow")}
	writeIPC(t, files["one batch"], rec)
	writeIPCSlices(t, files["stream"], false, rec, 7000)
	writeIPCSlices(t, files["zstd"], true, rec, 9000, ipc.WithZstd())
	was := ipcSliceBytes
	ipcSliceBytes = 16 << 10
	t.Cleanup(func() { ipcSliceBytes = was })
	// Under the race detector every other reading of the files is left out
	// (raceSkips, counted over keys, files and workers); the Makefile runs
	// them all without it.
	i := 0
	for _, keys := range [][]string{{"i64_low"}, {"word"}, {"flag", "day"}} {
		req := engine.GroupRequest{Keys: keys, Columns: []string{"i32", "f64", "word", "price", "point.a", "u64"}, Aggs: agg.Default | agg.Ordered, CountRows: true}
		eng := newEngine(t, mem)
		g, err := eng.NewGrouper(rec.Schema(), req)
		require.NoError(t, err)
		for lo := int64(0); lo < rows; lo += 5000 {
			s := rec.NewSlice(lo, lo+5000)
			require.NoError(t, g.Add(ctx, s))
			s.Release()
		}
		groups, err := g.Result(mem)
		require.NoError(t, err)
		var want bytes.Buffer
		require.NoError(t, report.WriteGroups(&want, report.JSON, report.Groups{Rows: rows, Files: 1, Kept: rows, Record: groups}))
		groups.Release()
		g.Close()
		for _, name := range []string{"one batch", "stream", "zstd"} {
			path := files[name]
			for _, workers := range []int{1, 4} {
				skip := raceSkips(i)
				i++
				if skip {
					continue
				}
				srcs, err := Expand([]string{path})
				require.NoError(t, err)
				d, err := Open(ctx, srcs, Options{Mem: mem, Budget: budget.New(2<<20, "the test's budget"), Workers: workers})
				require.NoError(t, err)
				sum, err := d.Group(ctx, eng, req)
				require.NoError(t, err, "%s, keys %v", name, keys)
				var got bytes.Buffer
				require.NoError(t, report.WriteGroups(&got, report.JSON, report.Groups{Rows: sum.Rows, Files: sum.Files, Kept: sum.Kept, Record: sum.Groups}))
				sum.Groups.Release()
				require.NoError(t, d.Close())
				assert.Equal(t, want.String(), got.String(), "%s, keys %v, %d workers", name, keys, workers)
			}
		}
	}
}

// Grouping an IPC file in place stops when its context is cancelled while
// slices are prepared (here by the 400th allocation of the slices' copies,
// of about 1,600): the context's error, nothing leaked, the budget whole
// again.
func TestGroupIPCInPlaceCancel(t *testing.T) {
	checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer checked.AssertSize(t, 0)
	rec := pqRecord(checked, pqCols()[:12], 50_000, 8)
	path := filepath.Join(t.TempDir(), "c.arrow")
	writeIPC(t, path, rec)
	rec.Release()
	was := ipcSliceBytes
	ipcSliceBytes = 4 << 10 // (hundreds of slices)
	t.Cleanup(func() { ipcSliceBytes = was })
	ctx, cancel := context.WithCancel(context.Background())
	mem := &hookAllocator{Allocator: checked, hook: cancel}
	mem.after.Store(400)
	b := budget.New(64<<20, "the test's budget")
	srcs, err := Expand([]string{path})
	require.NoError(t, err)
	d, err := Open(context.Background(), srcs, Options{Mem: mem, Budget: b, Workers: 4})
	require.NoError(t, err)
	_, err = d.Group(ctx, newEngine(t, checked), engine.GroupRequest{Keys: []string{"i64_low"}, Columns: []string{"i32", "f64"}, Aggs: agg.Default | agg.Ordered})
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, d.Close())
	assert.Zero(t, b.Used(), "the budget's charges given back")
}

// hookAllocator calls hook at its after-th allocation.
type hookAllocator struct {
	memory.Allocator
	n, after atomic.Int64
	hook     func()
}

func (a *hookAllocator) Allocate(size int) []byte {
	if a.n.Add(1) == a.after.Load() {
		a.hook()
	}
	return a.Allocator.Allocate(size)
}

// A file cut while it is grouped in place gives an error naming it that
// says the file changed, or the groups of the whole file when the read was
// over, never a crash (a SIGBUS of the mapping) or "corrupt", and leaks
// nothing. The cut comes once the file is open, before its rows are read,
// or from the goroutine of one of the run's allocations (the reader's and
// the engine's), at several points of the read: an IPC file's slices are
// copied out of the mapping by the workers (or out of the batches read),
// and cut among them; a Parquet file's pages are read with few allocations
// of the run, its later cuts come after its pages are read (the whole
// file's groups, or the error of the check at its end).
func TestGroupTruncatedWhileRead(t *testing.T) {
	checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer checked.AssertSize(t, 0)
	rec := pqRecord(checked, pqCols()[:12], 50_000, 8)
	dir := t.TempDir()
	files := map[string]string{"ipc": filepath.Join(dir, "orig.arrow"), "snappy": filepath.Join(dir, "snappy.parquet"),
		"zstd": filepath.Join(dir, "zstd.parquet")}
	writeIPCSlices(t, files["ipc"], true, rec, 20_000) // (three batches)
	rg := parquet.WithMaxRowGroupLength(20_000)
	writePQ(t, files["snappy"], rec, pqConfig{props: []parquet.WriterProperty{rg, parquet.WithCompression(compress.Codecs.Snappy)}})
	writePQ(t, files["zstd"], rec, pqConfig{props: []parquet.WriterProperty{rg, parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithDataPageVersion(parquet.DataPageV2)}})
	rec.Release()
	was := ipcSliceBytes
	ipcSliceBytes = 4 << 10 // (hundreds of slices)
	t.Cleanup(func() { ipcSliceBytes = was })
	req := engine.GroupRequest{Keys: []string{"i64_low"}, Columns: []string{"i32", "f64", "u64"}, Aggs: agg.Default}
	// group groups path, calling opened once it is open.
	group := func(path string, mem memory.Allocator, opened func()) (string, error) {
		srcs, err := Expand([]string{path})
		require.NoError(t, err)
		b := budget.New(64<<20, "the test's budget")
		d, err := Open(context.Background(), srcs, Options{Mem: mem, Budget: b, Workers: 4})
		require.NoError(t, err)
		defer func() {
			require.NoError(t, d.Close())
			assert.Zero(t, b.Used(), "the budget's charges given back")
		}()
		opened()
		sum, err := d.Group(context.Background(), newEngine(t, mem), req)
		if err != nil {
			return "", err
		}
		defer sum.Groups.Release()
		var out bytes.Buffer
		require.NoError(t, report.WriteGroups(&out, report.JSON, report.Groups{Rows: sum.Rows, Files: sum.Files, Kept: sum.Kept, Record: sum.Groups}))
		return out.String(), nil
	}
	for _, name := range []string{"ipc", "snappy", "zstd"} {
		orig := files[name]
		data, err := os.ReadFile(orig)
		require.NoError(t, err)
		size := int64(len(data))
		counting := &hookAllocator{Allocator: checked, hook: func() {}}
		want, err := group(orig, counting, func() {})
		require.NoError(t, err)
		t.Logf("%s: %d allocations", name, counting.n.Load())
		for _, mapped := range []bool{true, false} {
			t.Run(name, func(t *testing.T) {
				withMmap(t, mapped, func(t *testing.T) {
					errs := 0
					path := filepath.Join(dir, "cut")
					n := counting.n.Load()
					for _, at := range raceSubset([]int64{0, n / 8, n / 3, 2 * n / 3}) { // (0: once open)
						for _, to := range raceSubset([]int64{0, size / 4, size / 2, size - 4096}) {
							require.NoError(t, os.WriteFile(path, data, 0o644))
							cut := func() { assert.NoError(t, os.Truncate(path, to)) }
							mem := &hookAllocator{Allocator: checked, hook: cut}
							mem.after.Store(at)
							got, err := group(path, mem, func() {
								if at == 0 {
									cut()
								}
							})
							if err != nil {
								errs++
								var e *Error
								require.ErrorAs(t, err, &e, "cut at allocation %d to %d", at, to)
								assert.Equal(t, path, e.Path)
								assert.ErrorIs(t, err, errFileChanged, "the change, not corrupt bytes: %v", err)
								continue
							}
							assert.Equal(t, want, got, "cut at allocation %d to %d: no error, so the whole file's groups", at, to)
						}
					}
					assert.Positive(t, errs)
				})
			})
		}
	}
}

// Grouping an IPC file in place holds at most a slice a worker of the
// budget at once (copied and not yet added), whatever the workers' speed
// against the adding's: a file of many slices, the peak of the budget's
// charges within the workers' slices and the batches' charges.
func TestGroupIPCSlicesHeld(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := pqRecord(mem, pqCols()[:12], 200_000, 3)
	path := filepath.Join(t.TempDir(), "many.arrow")
	writeIPCSlices(t, path, true, rec, 25_000)
	rec.Release()
	was := ipcSliceBytes
	ipcSliceBytes = 64 << 10
	t.Cleanup(func() { ipcSliceBytes = was })
	req := engine.GroupRequest{Keys: []string{"i64_low"}, Columns: []string{"i32", "f64", "u64"}, Aggs: agg.Default}
	for _, workers := range []int{1, 3, 8} {
		b := budget.New(1<<40, "the test's budget")
		srcs, err := Expand([]string{path})
		require.NoError(t, err)
		d, err := Open(context.Background(), srcs, Options{Mem: mem, Budget: b, Workers: workers})
		require.NoError(t, err)
		before := b.Used() // (the footer's)
		sum, err := d.Group(context.Background(), newEngine(t, mem), req)
		require.NoError(t, err)
		sum.Groups.Release()
		require.NoError(t, d.Close())
		slice := ipcSliceSize(workers) + 4096 // (sliceBytes' padding, bitmaps and rounding)
		assert.LessOrEqual(t, b.Peak()-before, int64(workers)*slice, "%d workers", workers)
	}
}
