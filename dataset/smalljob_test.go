package dataset

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/engine"
)

// lazyPageGPU is a GPU backend that sets its device up lazily
// (backend.Prober), as the CUDA backend does, and takes fixed-width views
// and Parquet pages: it counts its probes, its calibrations (the planner
// asks its DeviceName) and the work given to it.
type lazyPageGPU struct {
	cpu                  cpu.CPU
	probes, names, calls atomic.Int64
}

var (
	_ backend.Prober  = (*lazyPageGPU)(nil)
	_ backend.PageGPU = (*lazyPageGPU)(nil)
)

func (g *lazyPageGPU) Name() string       { return "gpu" }
func (g *lazyPageGPU) Close() error       { return nil }
func (g *lazyPageGPU) Warm() error        { return nil }
func (g *lazyPageGPU) Probe() error       { g.probes.Add(1); return nil }
func (g *lazyPageGPU) DeviceName() string { g.names.Add(1); return "lazy" }
func (g *lazyPageGPU) Handles(v *column.View) bool {
	return v.Kind.Family() != column.FamilyBytes && v.Kind != column.Opaque && v.Dict == nil
}
func (g *lazyPageGPU) HandlesPages(k column.Kind, _ agg.Set) bool { return column.PageKind(k) }
func (g *lazyPageGPU) Update(ctx context.Context, views []*column.View, states []*agg.State) error {
	g.calls.Add(1)
	return g.cpu.Update(ctx, views, states)
}
func (g *lazyPageGPU) UpdatePages(context.Context, *column.Pages, *agg.State) error {
	g.calls.Add(1)
	return errors.New("lazyPageGPU decodes no pages")
}

// TestSmallFileOpensNoGPU: under --device auto, a Parquet file whose every
// chunk the CPU is estimated to read in less than the GPU's start
// (planner.PagesWorthAsking over the whole file) is read without a
// calibration: the GPU backend is neither probed nor named nor given work,
// though its page windows are larger than tiny views (planner.TinyBytes),
// which would each ask for one. The results are the CPU's, and the plans
// say why.
func TestSmallFileOpensNoGPU(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := pqRecord(mem, pqCols()[:12], 200_000, 5)
	path := filepath.Join(t.TempDir(), "small.parquet")
	writePQ(t, path, rec, pqConfig{props: []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithMaxRowGroupLength(70_000)}})
	rec.Release()
	want, _ := aggregateFile(t, mem, []string{path}, Options{}, agg.Default)

	gpu := &lazyPageGPU{cpu: cpu.CPU{Threads: 1}}
	eng, err := engine.New(engine.WithGPU(gpu), engine.WithThreads(2), engine.WithAllocator(mem))
	require.NoError(t, err)
	defer eng.Close()
	srcs, err := Expand([]string{path})
	require.NoError(t, err)
	d, err := Open(context.Background(), srcs, Options{Mem: mem})
	require.NoError(t, err)
	defer d.Close()
	sel, err := d.Select(nil)
	require.NoError(t, err)
	sum, err := d.Aggregate(context.Background(), eng, sel, AggregateOptions{})
	require.NoError(t, err)
	paged := 0
	for i, r := range sum.Results {
		assert.Equal(t, want[i], render(r))
		assert.Equal(t, "cpu", sum.Plan[i].BackendName(), sum.Plan[i].Name)
		if sum.Plan[i].Reason != pageReason && sum.Plan[i].Source == engine.SourcePages {
			assert.Contains(t, sum.Plan[i].Reason, "than the gpu's start", sum.Plan[i].Name)
			paged++
		}
	}
	assert.Positive(t, paged, "columns the page kernels could take")
	assert.Zero(t, gpu.probes.Load(), "probed for a small file")
	assert.Zero(t, gpu.names.Load(), "calibrated for a small file")
	assert.Zero(t, gpu.calls.Load(), "work given to the GPU")
}
