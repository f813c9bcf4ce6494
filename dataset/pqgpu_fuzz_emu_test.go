//go:build emu

package dataset

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/internal/emugpu"
)

// FuzzGPURoute reads arbitrary bytes as a Parquet file through the GPU page
// route, its kernels emulated, and on the CPU page path: neither panics,
// and both give the same answers or both fail. The seeds are small files
// of every kind the route decodes, in pages v1 and v2, snappy (which the
// kernels decompress) and zstd (which the host does), with and without
// dictionaries, and cuts of them.
func FuzzGPURoute(f *testing.F) {
	dir := f.TempDir()
	for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
		for _, codec := range []compress.Compression{compress.Codecs.Snappy, compress.Codecs.Zstd} {
			for _, dict := range []bool{true, false} {
				data, err := os.ReadFile(gpuPagesFile(f, dir, v, codec, dict, 40))
				require.NoError(f, err)
				f.Add(data)
				f.Add(data[: len(data)/2 : len(data)/2])
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := writeInput(t, "input.parquet", data)
		ctx, cancel := context.WithTimeout(context.Background(), fuzzTimeout)
		defer cancel()
		start := time.Now()
		cpu, cerr := aggregateRoute(ctx, path, engine.DeviceCPU, nil)
		gpu, gerr := aggregateRoute(ctx, path, engine.DeviceGPU, &emugpu.Backend{})
		require.Less(t, time.Since(start), fuzzTimeout, "reading took too long")
		if cerr != nil || gerr != nil {
			require.Equal(t, cerr != nil, gerr != nil, "cpu: %v; gpu: %v", cerr, gerr)
			var e *Error
			if assert.ErrorAs(t, gerr, &e) {
				assert.Equal(t, path, e.Path, "the error %q does not name the input", gerr)
			}
			return
		}
		require.Len(t, gpu.Results, len(cpu.Results))
		for i, c := range cpu.Results {
			assertSameColumn(t, fmt.Sprintf("%s: %s", filepath.Base(path), c.Name), c, gpu.Results[i])
		}
	})
}
