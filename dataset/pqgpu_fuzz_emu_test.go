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
// route, its kernels emulated, on a device of ample memory and on one of
// none (every column short of it: the file read again on the CPU), and on
// the CPU page path: none panics, and all give the same answers or all
// fail. The seeds are small files of every kind the route decodes, in
// pages v1 and v2, snappy (which the kernels decompress) and zstd (which
// the host does), with and without dictionaries, and cuts of them.
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
		for _, dev := range []*emugpu.Backend{{}, {DeviceBytes: 1}} {
			gpu, gerr := aggregateRoute(ctx, path, engine.DeviceGPU, dev)
			require.Less(t, time.Since(start), fuzzTimeout, "reading took too long")
			if cerr != nil || gerr != nil {
				require.Equal(t, cerr != nil, gerr != nil, "device of %d bytes: cpu: %v; gpu: %v", dev.DeviceBytes, cerr, gerr)
				var e *Error
				if assert.ErrorAs(t, gerr, &e) {
					assert.Equal(t, path, e.Path, "the error %q does not name the input", gerr)
				}
				continue
			}
			require.Len(t, gpu.Results, len(cpu.Results))
			for i, c := range cpu.Results {
				assertSameColumn(t, fmt.Sprintf("%s (device of %d bytes): %s", filepath.Base(path), dev.DeviceBytes, c.Name), c, gpu.Results[i])
			}
		}
	})
}
