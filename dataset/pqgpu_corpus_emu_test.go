//go:build emu

package dataset

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/internal/emugpu"
)

// TestGPUPagesEmulatedCorpus aggregates every Parquet file of the
// parquet-testing corpus (the encrypted ones and the two of tiny pages
// aside) through the GPU page
// route, its kernels emulated, and through the CPU: the same answers (floats'
// sums within 1e-12 relative), or an error from both. The writers' variety
// (Impala, parquet-mr, Spark, Rust, pages v2 of nothing) meets the route
// here; the columns it does not take go to the CPU page path either way. It
// found the v2 page of nothing that the route sent to the snappy kernel.
func TestGPUPagesEmulatedCorpus(t *testing.T) {
	dir := filepath.Dir(parquetTesting(t, "alltypes_plain.parquet"))
	files, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Parquet files in %s: %v", dir, err)
	}
	ctx := context.Background()
	routed := 0
	for _, path := range files {
		name := filepath.Base(path)
		if strings.HasPrefix(name, "alltypes_tiny_pages") {
			// Thousands of pages of a few rows: a block each, emulated one
			// after another, 70 s a file; the generated files of
			// TestGPUPagesEmulated have many pages a chunk too.
			continue
		}
		cpu, cerr := aggregateRoute(ctx, path, engine.DeviceCPU, nil)
		gpu, gerr := aggregateRoute(ctx, path, engine.DeviceGPU, &emugpu.Backend{})
		if cerr != nil || gerr != nil {
			assert.Equal(t, cerr != nil, gerr != nil, "%s: cpu %v, gpu %v", name, cerr, gerr)
			continue
		}
		for i, c := range cpu.Results {
			g := gpu.Results[i]
			if gpu.Plan[i].BackendName() == "gpu" {
				routed++
			}
			assertSameColumn(t, fmt.Sprintf("%s: %s", name, c.Name), c, g)
		}
	}
	assert.Greater(t, routed, 20, "columns of the corpus that took the GPU page route")
}

// aggregateRoute aggregates every column of path (its INT96 timestamps in
// microseconds, as the corpus's Spark file needs) with an engine of device
// d and GPU backend gpu.
func aggregateRoute(ctx context.Context, path string, d engine.Device, gpu *emugpu.Backend) (*Summary, error) {
	opts := []engine.Option{engine.WithDevice(d), engine.WithThreads(2)}
	if gpu != nil {
		opts = append(opts, engine.WithGPU(gpu))
	}
	eng, err := engine.New(opts...)
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	srcs, err := Expand([]string{path})
	if err != nil {
		return nil, err
	}
	o := Options{}
	if strings.Contains(path, "int96") {
		o.Int96 = Int96Microseconds
	}
	ds, err := Open(ctx, srcs, o)
	if err != nil {
		return nil, err
	}
	defer ds.Close()
	sel, err := ds.Select(nil)
	if err != nil {
		return nil, err
	}
	return ds.Aggregate(ctx, eng, sel, AggregateOptions{})
}
