package dataset

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
)

// writeTruncationParquet writes rowGroups row groups of n rows of an int64
// column with nulls and a float64 column, PLAIN (no dictionary), in codec.
func writeTruncationParquet(t *testing.T, path string, codec compress.Compression, rowGroups, n int) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(parquet.WithCompression(codec),
		parquet.WithDictionaryDefault(false), parquet.WithMaxRowGroupLength(int64(n))), pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	mem := memory.NewGoAllocator()
	for g := 0; g < rowGroups; g++ {
		ib := array.NewInt64Builder(mem)
		fb := array.NewFloat64Builder(mem)
		for i := 0; i < n; i++ {
			x := int64(g*n + i)
			if x%7 == 0 {
				ib.AppendNull()
			} else {
				ib.Append(x * 31)
			}
			fb.Append(float64(x) / 4)
		}
		cols := []arrow.Array{ib.NewArray(), fb.NewArray()}
		rec := array.NewRecord(schema, cols, int64(n))
		require.NoError(t, w.Write(rec))
		rec.Release()
		cols[0].Release()
		cols[1].Release()
		ib.Release()
		fb.Release()
	}
	require.NoError(t, w.Close())
}

// A Parquet file truncated while it is read (its pages read in place from
// the mapping, or with ReadAt) gives an error naming it, or the right
// answer if the read was over, never a crash (a SIGBUS of the mapping):
// the truncation comes from another goroutine at several points of the
// read, the pages uncompressed (folded where they lie in the mapping) and
// compressed.
func TestParquetTruncatedWhileRead(t *testing.T) {
	dir := t.TempDir()
	for _, codec := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy} {
		orig := filepath.Join(dir, "orig.parquet")
		writeTruncationParquet(t, orig, codec, 8, 100_000)
		data, err := os.ReadFile(orig)
		require.NoError(t, err)
		want, err := aggregateIPCWith(t, orig, agg.Default, 2, nil)
		require.NoError(t, err)
		size := int64(len(data))
		for _, mapped := range []bool{true, false} {
			withMmap(t, mapped, func(t *testing.T) {
				errs := truncatedWhileRead(t, filepath.Join(dir, "cut.parquet"), data, want,
					[]int64{size / 8, size / 3, size / 2, 3 * size / 4}, []int64{0, size / 4, size / 2, size - 4096}, true)
				assert.Positive(t, errs)
			})
		}
	}
}

// mappedRSS is the resident size in KiB of the mapping that starts at addr,
// from /proc/self/smaps: the pages that have page-table entries.
func mappedRSS(t *testing.T, addr uintptr) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/smaps")
	require.NoError(t, err)
	head := fmt.Sprintf("%x-", addr)
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			in = strings.HasPrefix(line, head)
			continue
		}
		if in && strings.HasPrefix(line, "Rss:") {
			kb, err := strconv.Atoi(strings.Fields(line)[1])
			require.NoError(t, err)
			return kb
		}
	}
	t.Fatalf("no mapping at %#x in /proc/self/smaps", addr)
	return 0
}

// A range released by releaseMapped loses its page-table entries (so that
// the unmap at the end costs nothing for it) and keeps its bytes: reading
// them again maps them again, from the page cache. Ranges not aligned to
// pages release the pages they cover whole, and nothing outside them.
func TestReleaseMappedKeepsTheBytes(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/smaps")
	}
	page := os.Getpagesize()
	want := make([]byte, 64*page)
	for i := range want {
		want[i] = byte(i*7 + i/page)
	}
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, want, 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	m, err := mapSource(&sourceBytes{file: f}, int64(len(want)))
	require.NoError(t, err)
	require.NotNil(t, m.mapped, "the file is mapped")
	defer m.unmap() //nolint:errcheck
	addr := uintptr(unsafe.Pointer(&m.mapped[0]))
	touch := func() (sum int) {
		for i := 0; i < len(m.mapped); i += page {
			sum += int(m.mapped[i])
		}
		return sum
	}
	sum := touch()
	all := mappedRSS(t, addr)
	require.Equal(t, len(want)/1024, all, "every page mapped after the reads")

	// Pages 8 to 39 whole, from a range that starts and ends inside pages 7 and 40.
	releaseMapped(m.mapped, int64(7*page+1), int64(33*page))
	assert.Equal(t, all-32*page/1024, mappedRSS(t, addr), "the 32 pages covered whole are released")
	assert.Equal(t, want, m.mapped, "the bytes read back")
	assert.Equal(t, sum, touch())
	assert.Equal(t, all, mappedRSS(t, addr), "mapped again by the reads")

	// Nothing to release: a range inside one page, past the end of the file, or nil.
	releaseMapped(m.mapped, int64(3*page+1), int64(page-2))
	releaseMapped(m.mapped, int64(len(want)), int64(page))
	releaseMapped(nil, 0, int64(len(want)))
	assert.Equal(t, all, mappedRSS(t, addr))
	// The tail: to the end of the file.
	releaseMapped(m.mapped, int64(60*page), int64(100*page))
	assert.Equal(t, all-4*page/1024, mappedRSS(t, addr))
}
