//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/internal/pqdev"
	"github.com/arrowagg/arrowagg/planner"
)

// TestPagesSample runs the page kernels on the calibration's sample pages
// of every class (pages that share their stored bytes): the state is the
// CPU backend's over the values they hold.
func TestPagesSample(t *testing.T) {
	for c := range planner.NumPageClasses {
		c := planner.PageClass(c)
		t.Run(c.String(), func(t *testing.T) {
			p, err := pqdev.Sample(c.Snappy(), c.Dictionary(), 40, 3)
			require.NoError(t, err)
			got := agg.New(column.FamilySigned, agg.Default)
			require.NoError(t, testBackend.UpdatePages(context.Background(), p, &got))
			v := pqdev.SampleView(c.Dictionary(), 40, 3)
			want := agg.New(column.FamilySigned, agg.Default)
			require.NoError(t, (&cpu.CPU{Threads: 1}).Update(context.Background(), []*column.View{v}, []*agg.State{&want}))
			assert.Equal(t, want, got)
		})
	}
}

// TestTimePagesSpread: the calibration's launches on sample pages, their
// bytes shared or spread (each page's a copy of its own), give the state
// UpdatePages gives.
func TestTimePagesSpread(t *testing.T) {
	for c := range planner.NumPageClasses {
		c := planner.PageClass(c)
		t.Run(c.String(), func(t *testing.T) {
			p, err := pqdev.Sample(c.Snappy(), c.Dictionary(), 40, 3)
			require.NoError(t, err)
			want := agg.New(column.FamilySigned, agg.Default)
			require.NoError(t, testBackend.UpdatePages(context.Background(), p, &want))
			for _, spread := range []bool{false, true} {
				l, err := pqdev.Plan(p)
				require.NoError(t, err)
				s, secs, err := testBackend.timePages(context.Background(), p, &l, spread)
				require.NoError(t, err)
				assert.Positive(t, secs)
				got := agg.New(column.FamilySigned, agg.Default)
				got.Merge(&s)
				assert.Equal(t, want, got, "spread %v", spread)
			}
		})
	}
}

// TestCalibrateGPU measures this GPU's figures, the page kernels' rates by
// class among them: every one measured and valid, and the device memory it
// used not kept.
func TestCalibrateGPU(t *testing.T) {
	cal := planner.Defaults(4)
	require.NoError(t, testBackend.CalibrateGPU(context.Background(), &cal))
	require.NoError(t, cal.Validate())
	assert.True(t, cal.HasGPU())
	var cached int64
	require.NoError(t, testBackend.d.do(func() error { cached = testBackend.d.pool.cached; return nil }))
	assert.Zero(t, cached, "the calibration's device memory freed")
	assert.Empty(t, cal.PageError)
	for c, r := range cal.PageRates {
		assert.Greater(t, r, 1e9, "%v pages", planner.PageClass(c))
		t.Logf("%v pages: %.1f GB/s", planner.PageClass(c), r/1e9)
	}
	t.Logf("staged upload %.1f GB/s, resident read %.0f GB/s, launch %v", cal.HostStaged/1e9, cal.DeviceRead/1e9, cal.Launch)
}

// BenchmarkPageRates is the page kernels' calibration (calibratePages)
// with several numbers of snappy pages and bytes of uncompressed ones: how
// far the rates depend on them. The rates are reported in GB/s of
// decompressed pages by class.
func BenchmarkPageRates(b *testing.B) {
	for _, n := range []struct {
		snappy int
		plain  int64
	}{{1024, 64 << 20}, {2048, 128 << 20}, {4096, 256 << 20}, {8192, 512 << 20}} {
		b.Run(fmt.Sprintf("snappy=%d/plain=%dMiB", n.snappy, n.plain>>20), func(b *testing.B) {
			var r planner.PageRates
			for b.Loop() {
				var err error
				if r, err = testBackend.calibratePages(context.Background(), n.snappy, n.plain); err != nil {
					b.Fatal(err)
				}
			}
			for c, x := range r {
				b.ReportMetric(x/1e9, "GB/s-"+[...]string{"plain", "snappy", "dict", "snappy-dict"}[c])
			}
		})
	}
}

// chunksOf is k chunks, each a copy of p's one chunk (its pages and
// dictionary), one after the other in a buffer of their own.
func chunksOf(p *column.Pages, k int) *column.Pages {
	q := &column.Pages{Type: p.Type, Kind: p.Kind, Nullable: p.Nullable, Rows: int64(k) * p.Rows}
	for c := range k {
		at := int64(len(q.Data))
		q.Data = append(q.Data, p.Data...)
		q.Chunks = append(q.Chunks, column.Span{Off: at, Len: int64(len(p.Data))})
		q.Dicts = append(q.Dicts, p.Dicts[0])
		for _, pg := range p.Pages {
			pg.Chunk, pg.Offset, pg.RowGroup = c, pg.Offset+at, c
			q.Pages = append(q.Pages, pg)
		}
	}
	return q
}

// TestPagesShortOfMemory: pages that the device has no room for at once go
// up in smaller batches, the same state; pages it has no room for even a
// chunk at a time fail with an error matching backend.ErrDeviceMemory,
// the state untouched and a warning given, and the backend works on.
func TestPagesShortOfMemory(t *testing.T) {
	sample, err := pqdev.Sample(true, true, 40, 3)
	require.NoError(t, err)
	p := chunksOf(sample, 8)
	require.NoError(t, p.Check())
	want := agg.New(column.FamilySigned, agg.Default)
	require.NoError(t, testBackend.UpdatePages(t.Context(), p, &want))
	require.Equal(t, p.Rows, want.Count)

	var warnings []string
	b, err := Open(WithWarnings(func(m string) { warnings = append(warnings, m) }))
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()

	// The first allocation of the device fails (nothing cached to free):
	// the 8 chunks go up again as two batches.
	once := &faults{point: faultDeviceAlloc, nth: 1}
	got := agg.New(column.FamilySigned, agg.Default)
	_, err = withFaults(t, b, once, func() (struct{}, error) { return struct{}{}, b.UpdatePages(t.Context(), p, &got) })
	require.NoError(t, err)
	assert.Equal(t, want, got, "the state of smaller batches")
	assert.Equal(t, 1, once.injected)
	assert.Empty(t, warnings)

	// Every allocation fails: the batches shrink to a chunk, then the call
	// fails.
	always := &faults{point: faultDeviceAlloc, nth: 1, sticky: true}
	got = agg.New(column.FamilySigned, agg.Default)
	_, err = withFaults(t, b, always, func() (struct{}, error) { return struct{}{}, b.UpdatePages(t.Context(), p, &got) })
	require.ErrorIs(t, err, backend.ErrDeviceMemory)
	require.ErrorIs(t, err, ErrOutOfMemory)
	assert.Equal(t, agg.New(column.FamilySigned, agg.Default), got, "the state is untouched")
	assert.GreaterOrEqual(t, always.injected, 3, "tries: all 8 chunks, 4, 2, then 1")
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "too little free device memory")

	got = agg.New(column.FamilySigned, agg.Default)
	require.NoError(t, b.UpdatePages(t.Context(), p, &got), "after the faults")
	assert.Equal(t, want, got)
}
