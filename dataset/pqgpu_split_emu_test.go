//go:build emu

package dataset

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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
// chunk by its own costs, the GPU taking the chunks that cost it least and
// the CPU reading the others at once. Of 64 row groups, the 32 whose snappy
// pages compress twentyfold go to the GPU (the route's walk and copies
// cost their stored bytes) with some of the 32 of random values, as many as
// end the file first (the CPU reads a chunk on one goroutine, 8 of them
// here); the explain names the row groups of each route, and the answers
// and bytes are the CPU's.
func TestGPUPagesSplitByChunk(t *testing.T) {
	const groups, rows = 64, 20000
	schema := arrow.NewSchema([]arrow.Field{{Name: "mixed", Type: arrow.PrimitiveTypes.Int64}}, nil)
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
		}
		rec := b.NewRecord()
		require.NoError(t, w.Write(rec))
		rec.Release()
		b.Release()
	}
	require.NoError(t, w.Close())

	defer func(n int) { maxRanges = n }(maxRanges)
	maxRanges = groups // (the plan's lists whole: read below)
	ctx := context.Background()
	cpu := aggregateOn(t, ctx, path, engine.DeviceCPU, nil)
	cal := planner.Defaults(8)
	cal.GPU = "H200"
	cal.H2DPinned, cal.HostStaged, cal.DeviceRead = 50e9, 45e9, 4e12
	gpu := &openEmu{}
	sum := aggregateOn(t, ctx, path, engine.DeviceAuto, gpu, engine.WithThreads(8), engine.WithCalibration(cal))

	assertSameColumn(t, "mixed", cpu.Results[0], sum.Results[0])
	p := sum.Plan[0]
	assert.Equal(t, cpu.Plan[0].Bytes, p.Bytes, "the pages' bytes decompressed, whichever route read them")
	assert.Equal(t, "cpu+gpu", p.BackendName())
	m := regexp.MustCompile(`^row groups ([-0-9, ]+): parquet pages decoded on the gpu, the cpu reading the other chunks at once: \S+ estimated, \S+ on 8 cpu threads alone; ` +
		`row groups ([-0-9, ]+): parquet pages decoded on the cpu, the gpu decoding the other chunks at once: \S+ estimated, \S+ on the cpu alone$`).FindStringSubmatch(p.Reason)
	require.NotNil(t, m, p.Reason)
	on := make([]bool, groups)
	for _, r := range strings.Split(m[1], ", ") {
		lo, hi, _ := strings.Cut(r, "-")
		a, err := strconv.Atoi(lo)
		require.NoError(t, err)
		b := a
		if hi != "" {
			b, err = strconv.Atoi(hi)
			require.NoError(t, err)
		}
		for g := a; g <= b; g++ {
			on[g] = true
		}
	}
	random := 0
	for g := 0; g < groups; g++ {
		if g%2 == 0 {
			assert.True(t, on[g], "row group %d of runs on the GPU", g)
		} else if on[g] {
			random++
		}
	}
	assert.Less(t, random, groups/2, "some random row groups left to the CPU")
	assert.InDelta(t, float64(groups/2+random)/groups, p.GPUFraction, 0.01, "the GPU's share of the bytes")
	assert.EqualValues(t, (groups/2+random)*rows, gpu.rows.Load(), "the rows the GPU decoded")
	var cpuOnly []bool
	for g := range on {
		cpuOnly = append(cpuOnly, !on[g])
	}
	assert.Equal(t, rowGroups(cpuOnly), m[2])

	// Under --device gpu every chunk goes.
	gpu.rows.Store(0)
	forced := aggregateOn(t, ctx, path, engine.DeviceGPU, gpu)
	assert.EqualValues(t, groups*rows, gpu.rows.Load())
	assertSameColumn(t, "mixed", cpu.Results[0], forced.Results[0])
	assert.Equal(t, "gpu", forced.Plan[0].BackendName())
	assert.Equal(t, 1.0, forced.Plan[0].GPUFraction)
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
