//go:build emu

package dataset

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/internal/emugpu"
	"github.com/arrowagg/arrowagg/planner"
)

// openEmu is the emulated page kernels on a device that is open already
// (backend.DeviceOpener), counting the rows of the pages they decode.
type openEmu struct {
	emugpu.Backend
	rows atomic.Int64
}

func (o *openEmu) DeviceOpen() bool { return true }
func (o *openEmu) UpdatePages(ctx context.Context, p *column.Pages, s *agg.State) error {
	o.rows.Add(p.Rows)
	return o.Backend.UpdatePages(ctx, p, s)
}

// TestGPUPagesSplitByChunk: under --device auto the planner routes each
// chunk by its own costs. Row groups whose snappy pages compress twentyfold
// go to the GPU (the route's walk and copies cost their stored bytes),
// those of random values stay on the CPU page path (8 goroutines read them
// faster than the route walks and copies them); the explain names the row
// groups of each route, and the answers are the CPU's.
func TestGPUPagesSplitByChunk(t *testing.T) {
	const groups, rows = 8, 20000
	schema := arrow.NewSchema([]arrow.Field{{Name: "mixed", Type: arrow.PrimitiveTypes.Int64},
		{Name: "random", Type: arrow.PrimitiveTypes.Int64}}, nil)
	path := filepath.Join(t.TempDir(), "split.parquet")
	f, err := os.Create(path)
	require.NoError(t, err)
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(false),
		parquet.WithMaxRowGroupLength(rows), parquet.WithStats(false))
	w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	rng := rand.New(rand.NewSource(1))
	for g := 0; g < groups; g++ {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for r := 0; r < rows; r++ {
			x := int64(g)
			if g%2 == 1 {
				x = rng.Int63()
			}
			b.Field(0).(*array.Int64Builder).Append(x)
			b.Field(1).(*array.Int64Builder).Append(rng.Int63())
		}
		rec := b.NewRecord()
		require.NoError(t, w.Write(rec))
		rec.Release()
		b.Release()
	}
	require.NoError(t, w.Close())

	ctx := context.Background()
	cpu := aggregateOn(t, ctx, path, engine.DeviceCPU, nil)
	cal := planner.Defaults(8)
	cal.GPU = "H200"
	cal.H2DPinned, cal.HostStaged, cal.DeviceRead = 50e9, 45e9, 4e12
	gpu := &openEmu{}
	eng, err := engine.New(engine.WithGPU(gpu), engine.WithThreads(8), engine.WithCalibration(cal))
	require.NoError(t, err)
	defer eng.Close()
	srcs, err := Expand([]string{path})
	require.NoError(t, err)
	ds, err := Open(ctx, srcs, Options{})
	require.NoError(t, err)
	defer ds.Close()
	sel, err := ds.Select(nil)
	require.NoError(t, err)
	sum, err := ds.Aggregate(ctx, eng, sel, AggregateOptions{})
	require.NoError(t, err)

	assert.EqualValues(t, groups/2*rows, gpu.rows.Load(), "the GPU decoded the even row groups of mixed")
	for i, c := range cpu.Results {
		assertSameColumn(t, c.Name, c, sum.Results[i])
	}
	mixed, random := sum.Plan[0], sum.Plan[1]
	assert.Equal(t, "cpu+gpu", mixed.BackendName())
	assert.Regexp(t, `^row groups 0, 2, 4, 6: parquet pages decoded on the gpu: \S+ estimated there, \S+ on 4 cpu threads; `+
		`row groups 1, 3, 5, 7: parquet pages decoded on the cpu: its snappy plain pages \S+ estimated, \S+ on the gpu$`, mixed.Reason)
	assert.Equal(t, "cpu", random.BackendName())
	assert.Regexp(t, `^parquet pages aggregated in place on the cpu \(parquet pages decoded on the cpu: its snappy plain pages \S+ estimated, \S+ on the gpu\)$`, random.Reason)
	for i, p := range cpu.Plan { // (the pages' bytes decompressed, whichever route read them)
		assert.Equal(t, p.Bytes, sum.Plan[i].Bytes, p.Name)
	}

	// Under --device gpu every chunk goes.
	gpu.rows.Store(0)
	forced := aggregateOn(t, ctx, path, engine.DeviceGPU, gpu)
	assert.EqualValues(t, 2*groups*rows, gpu.rows.Load())
	for i, c := range cpu.Results {
		assertSameColumn(t, c.Name, c, forced.Results[i])
		assert.Equal(t, "gpu", forced.Plan[i].BackendName())
	}
}

// TestGPUPagesRefusedChunks: under --device gpu, the columns whose pages
// the kernels do not decode (BYTE_STREAM_SPLIT, in the parquet-testing
// corpus's file of each type PLAIN and split) are read by the CPU page
// path, and their plans say why; the PLAIN ones go to the GPU.
func TestGPUPagesRefusedChunks(t *testing.T) {
	path := parquetTesting(t, "byte_stream_split_extended.gzip.parquet")
	ctx := context.Background()
	cpu := aggregateOn(t, ctx, path, engine.DeviceCPU, nil)
	sum := aggregateOn(t, ctx, path, engine.DeviceGPU, &emugpu.Backend{})
	split := 0
	for i, c := range cpu.Results {
		assertSameColumn(t, c.Name, c, sum.Results[i])
		typ, enc, _ := strings.Cut(c.Name, "_")
		if !slices.Contains([]string{"float", "double", "int32", "int64"}, typ) { // (the others are not the kernels')
			continue
		}
		p := sum.Plan[i]
		if enc == "plain" {
			assert.Equal(t, "gpu", p.BackendName(), c.Name)
			continue
		}
		split++
		assert.Equal(t, "cpu", p.BackendName(), c.Name)
		assert.Regexp(t, `^`+pageReason+` \(parquet pages decoded on the cpu: not a page of the GPU page kernels: encoding BYTE_STREAM_SPLIT of \S+ values\)$`, p.Reason, c.Name)
	}
	assert.GreaterOrEqual(t, split, 4, "float, double, int32, int64 split")
}
