package dataset

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/internal/testdatagen"
	"github.com/arrowagg/arrowagg/report"
)

// Grouping a file gives the groups of the rows it was made of: the same
// record, to the last bit, as the library's grouping of the generator's
// in-memory batches, for Parquet, IPC files and IPC streams, with one key
// and with two (a dictionary and a struct field among them).
func TestGroupMatchesGeneratedRows(t *testing.T) {
	for _, f := range testdatagen.Files {
		for _, keys := range [][]string{{"color"}, {"flag", "point.b"}, {"i8"}} {
			t.Run(f.Name+"/"+keys[0], func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				ctx := context.Background()
				req := engine.GroupRequest{Keys: keys, Columns: []string{"i64", "f64", "word", "price", "day", "u8", "flag"},
					Aggs: agg.Default | agg.Ordered, CountRows: true}
				srcs, err := Expand([]string{filepath.Join(testdata, f.Name)})
				require.NoError(t, err)
				d, err := Open(ctx, srcs, Options{Mem: mem})
				require.NoError(t, err)
				defer d.Close()
				eng := newEngine(t, mem)
				sum, err := d.Group(ctx, eng, req)
				require.NoError(t, err)
				defer sum.Groups.Release()
				assert.Equal(t, int64(f.Rows), sum.Rows)
				assert.Equal(t, int64(f.Rows), sum.Kept)

				g, err := eng.NewGrouper(testdatagen.Schema(f), req)
				require.NoError(t, err)
				for lo := 0; lo < f.Rows; lo += f.Chunk {
					rec := testdatagen.Record(mem, f, lo, min(lo+f.Chunk, f.Rows))
					require.NoError(t, g.Add(ctx, rec))
					rec.Release()
				}
				want, err := g.Result(mem)
				require.NoError(t, err)
				defer want.Release()
				require.Greater(t, want.NumRows(), int64(1))
				var wantJSON, gotJSON bytes.Buffer
				require.NoError(t, report.WriteGroups(&wantJSON, report.JSON, report.Groups{Rows: int64(f.Rows), Files: 1, Kept: g.Kept(), Record: want}))
				require.NoError(t, report.WriteGroups(&gotJSON, report.JSON, report.Groups{Rows: sum.Rows, Files: sum.Files, Kept: sum.Kept, Record: sum.Groups}))
				assert.Equal(t, wantJSON.String(), gotJSON.String())
			})
		}
	}
}
