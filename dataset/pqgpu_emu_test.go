//go:build emu

package dataset

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/internal/emugpu"
)

// TestGPUPagesEmulated is checkGPUPages with the page kernels run on the
// CPU (internal/emugpu), in batches small enough that a column takes
// several launches, and the host's decompressed pages in pieces of a few
// pages.
func TestGPUPagesEmulated(t *testing.T) {
	defer func(n int64) { hostPieceBytes = n }(hostPieceBytes)
	hostPieceBytes = 2 << 10
	checkGPUPages(t, &emugpu.Backend{Batch: 96 << 10})
}

// TestGPUPagesHostCorrupt flips bytes of a zstd file, its pages v1 and v2,
// and aggregates it on the CPU and through the GPU page route, whose
// host decompresses its pages: both give the same answers or both fail,
// and the route's error names the column and the page.
func TestGPUPagesHostCorrupt(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
		path := gpuPagesFile(t, dir, v, compress.Codecs.Zstd, false, 1200)
		orig, err := os.ReadFile(path)
		require.NoError(t, err)
		failed := 0
		for k := 0; k < 40; k++ {
			b := append([]byte(nil), orig...)
			at := 4 + (k*7919)%(len(b)/2) // (in the pages: the footer is in the last half's end)
			b[at] ^= 0x5a
			bad := filepath.Join(dir, fmt.Sprintf("bad-%d-%d.parquet", v, k))
			require.NoError(t, os.WriteFile(bad, b, 0o644))
			cpu, cerr := aggregateRoute(ctx, bad, engine.DeviceCPU, nil)
			gpu, gerr := aggregateRoute(ctx, bad, engine.DeviceGPU, &emugpu.Backend{})
			if cerr != nil || gerr != nil {
				require.Equal(t, cerr != nil, gerr != nil, "byte %d: cpu %v, gpu %v", at, cerr, gerr)
				assert.Contains(t, gerr.Error(), "column ", "byte %d", at)
				failed++
				continue
			}
			for i, c := range cpu.Results {
				assertSameColumn(t, fmt.Sprintf("byte %d: %s", at, c.Name), c, gpu.Results[i])
			}
		}
		assert.Greater(t, failed, 5, "v%d: corruptions that the readers caught", v)
	}
}
