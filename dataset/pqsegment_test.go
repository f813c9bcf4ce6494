package dataset

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
)

// smallSegments makes every data page of a chunk a segment of its own
// (aggregateChunk) for the test.
func smallSegments(t *testing.T) {
	was := segmentBytes
	segmentBytes = 1
	t.Cleanup(func() { segmentBytes = was })
}

// A chunk's pages folded a segment at a time, by idle workers, give what
// decoding through pqarrow gives, the same to the last bit whatever the
// number of workers, for every type, encoding, codec and page version of
// the page path, with every aggregate.
func TestPagePathSegments(t *testing.T) {
	smallSegments(t)
	dir := t.TempDir()
	helped := segmentsHelped.Load()
	for ci, cfg := range raceSubset(pqConfigs()) {
		t.Run(cfg.name, func(t *testing.T) {
			var mem memory.Allocator = memory.DefaultAllocator
			if cfg.leaks == "" {
				checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer checked.AssertSize(t, 0)
				mem = checked
			}
			rec := pqRecord(mem, pqCols(), 2500, uint64(ci))
			path := filepath.Join(dir, cfg.name+".parquet")
			writePQ(t, path, rec, cfg)
			rec.Release()
			for _, aggs := range []agg.Set{agg.Default | agg.Ordered, agg.Default | agg.Moments | agg.ApproxDistinct} {
				want, _ := aggregateFile(t, mem, []string{path}, Options{ArrowDecode: true, Workers: 3}, aggs)
				segmentBytes = 1 << 40 // (each chunk one segment)
				_, whole := aggregateFile(t, mem, []string{path}, Options{Workers: 1}, aggs)
				segmentBytes = 1
				pages := pageBytes(t, path)
				for _, workers := range []int{1, 4, 9} {
					got, sum := aggregateFile(t, mem, []string{path}, Options{Workers: workers}, aggs)
					require.Equal(t, want, got, "aggs %s, %d workers", aggs, workers)
					for i, p := range sum.Plan { // the pages' bytes, whoever folded them
						assert.Equal(t, whole.Plan[i].Reason, p.Reason, p.Name)
						if p.Reason == pageReason {
							assert.Equal(t, pages[p.Name], p.Bytes, p.Name)
						}
					}
				}
			}
		})
	}
	assert.Greater(t, segmentsHelped.Load(), helped, "no segment was folded by an idle worker")
}

// Float sums that do not sum exactly are the same to the last bit whatever
// the number of workers when a chunk's segments are folded by several.
func TestPagePathSegmentsDeterministic(t *testing.T) {
	smallSegments(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cols := []pqCol{
		genCol("f64", arrow.PrimitiveTypes.Float64, true, 0.1, true, func(r *rand.Rand) float64 { return r.NormFloat64() * 1e10 }),
		genCol("f32", arrow.PrimitiveTypes.Float32, true, 0.1, true, func(r *rand.Rand) float32 { return float32(r.ExpFloat64()) }),
	}
	rec := pqRecord(mem, cols, 60000, 43)
	path := filepath.Join(t.TempDir(), "floats.parquet")
	writePQ(t, path, rec, pqConfig{props: []parquet.WriterProperty{parquet.WithMaxRowGroupLength(1 << 20), parquet.WithDataPageSize(4 << 10)}}) // one row group
	rec.Release()
	want, _ := aggregateFile(t, mem, []string{path}, Options{Workers: 1}, agg.Default|agg.Ordered|agg.Moments)
	decoded, _ := aggregateFile(t, mem, []string{path}, Options{ArrowDecode: true}, agg.Default|agg.Ordered|agg.Moments)
	assert.Equal(t, decoded, want, "decoded through pqarrow")
	for _, workers := range []int{2, 7, 64} {
		for range 3 {
			got, _ := aggregateFile(t, mem, []string{path}, Options{Workers: workers}, agg.Default|agg.Ordered|agg.Moments)
			assert.Equal(t, want, got, "%d workers", workers)
		}
	}
}

// A corrupt page of a chunk folded a segment at a time fails the read with
// the error of its first bad page, whatever the number of workers: as if
// the pages were folded one after the other.
func TestPagePathSegmentErrors(t *testing.T) {
	smallSegments(t)
	dir := t.TempDir()
	failed := 0
	for ci, cfg := range pqConfigs()[:4] {
		good, data := goodFile(t, dir, ci, cfg)
		r := rand.New(rand.NewPCG(uint64(ci), 5))
		for k, cr := range chunkRanges(t, good) {
			if k%4 != ci%4 {
				continue
			}
			d := bytes.Clone(data)
			// Two runs of 0xFF in the chunk: its later pages may fail too.
			for range 2 {
				off := cr[0] + r.Int64N(cr[1]-cr[0])
				for i := off; i < min(off+5, cr[1]); i++ {
					d[i] = 0xFF
				}
			}
			path := filepath.Join(dir, fmt.Sprintf("bad-%d-%d.parquet", ci, k))
			require.NoError(t, os.WriteFile(path, d, 0o644))
			var first string
			for _, workers := range []int{1, 4, 16} {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				_, _, err := aggregatePaths(ctx, t, memory.DefaultAllocator, []string{path}, nil, Options{Workers: workers})
				require.NoError(t, ctx.Err(), "%s: hung", path)
				cancel()
				msg := fmt.Sprint(err)
				if workers == 1 {
					first = msg
					if err != nil {
						failed++
					}
					continue
				}
				assert.Equal(t, first, msg, "%s, %d workers", path, workers)
			}
			os.Remove(path)
		}
	}
	assert.Positive(t, failed)
}

// pageBytes is the decompressed bytes of the pages of each leaf column of
// a Parquet file, by its dotted path, as arrow-go's page reader reads them.
func pageBytes(t *testing.T, path string) map[string]int64 {
	t.Helper()
	pf, err := file.OpenParquetFile(path, false)
	require.NoError(t, err)
	defer pf.Close()
	out := make(map[string]int64)
	for rg := 0; rg < pf.NumRowGroups(); rg++ {
		for c := 0; c < pf.MetaData().Schema.NumColumns(); c++ {
			pr, err := pf.RowGroup(rg).GetColumnPageReader(c)
			require.NoError(t, err)
			name := pf.MetaData().Schema.Column(c).ColumnPath().String()
			for pr.Next() {
				out[name] += int64(len(pr.Page().Data()))
			}
			require.NoError(t, pr.Err())
		}
	}
	return out
}
