package dataset

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/engine"
)

// Hive-partitioned directories are read recursively; their keys are
// columns, int64 when every value reads as one, else utf8, null for
// __HIVE_DEFAULT_PARTITION__, exact over files of many morsels (the state of
// one window doubled), with the positions of the ordered aggregates.
func TestHivePartitions(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	rowsOf := []int{3*engine.MorselSize + 17, 5, engine.MorselSize}
	paths := []string{"year=2023/region=eu/a.arrow", "year=2024/region=us%2Fwest/b.arrow", "year=" + hiveNull + "/region=7/c.arrow"}
	for i, p := range paths {
		b := array.NewInt64Builder(mem)
		for k := 0; k < rowsOf[i]; k++ {
			b.Append(int64(k))
		}
		rec := oneColumn("v", b.NewArray())
		b.Release()
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755))
		writeIPC(t, filepath.Join(dir, p), rec)
		rec.Release()
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "plain"), 0o755)) // not a partition: not read
	writeIPC(t, filepath.Join(dir, "plain", "x.arrow"), int64Record("v", 1))

	srcs, err := Expand([]string{dir})
	require.NoError(t, err)
	require.Len(t, srcs, 3)
	assert.Equal(t, []Partition{{"year", "2024"}, {"region", "us/west"}}, srcs[1].Partitions)
	d, err := Open(context.Background(), srcs, Options{Mem: mem})
	require.NoError(t, err)
	defer d.Close()
	sel, err := d.Select([]string{"year", "region"})
	require.NoError(t, err)
	sum, err := d.Aggregate(context.Background(), newEngine(t, mem), sel, AggregateOptions{Aggs: agg.All})
	require.NoError(t, err)
	n0, n1, n2 := int64(rowsOf[0]), int64(rowsOf[1]), int64(rowsOf[2])
	year, region := sum.Results[0], sum.Results[1]
	assert.Equal(t, "int64", year.Type.String())
	assert.Equal(t, n0+n1, year.Count)
	assert.Equal(t, n2, year.NullCount)
	assert.Equal(t, fmt.Sprint(2023*n0+2024*n1), fmt.Sprint(year.SumExact))
	assert.Equal(t, "2023", fmt.Sprint(year.Min))
	assert.Equal(t, "2024", fmt.Sprint(year.Max))
	assert.Equal(t, "2023", fmt.Sprint(year.First))
	assert.Equal(t, "2024", fmt.Sprint(year.Last))
	assert.Equal(t, "0", fmt.Sprint(year.ArgMin))
	assert.Equal(t, fmt.Sprint(n0), fmt.Sprint(year.ArgMax))
	assert.Equal(t, "utf8", region.Type.String(), "7 reads as an integer, us/west does not")
	assert.Equal(t, n0+n1+n2, region.Count)
	assert.Equal(t, "7", fmt.Sprint(region.Min))
	assert.Equal(t, "us/west", fmt.Sprint(region.Max))
	assert.Equal(t, "7", fmt.Sprint(region.Last), "the null-year file is last: its directory sorts last")
	assert.Equal(t, fmt.Sprint(n0+n1), fmt.Sprint(region.ArgMin))

	// ** globs match at any depth, plain directories included.
	srcs, err = Expand([]string{filepath.Join(dir, "**", "*.arrow")})
	require.NoError(t, err)
	assert.Len(t, srcs, 4)

	// A key that is also a column of the file is an error.
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "v=1"), 0o755))
	writeIPC(t, filepath.Join(dir, "v=1", "y.arrow"), int64Record("v", 1))
	srcs, err = Expand([]string{filepath.Join(dir, "v=1")})
	require.NoError(t, err)
	_, err = Open(context.Background(), srcs, Options{})
	assert.ErrorContains(t, err, `column "v" is both a key of the path's partitions and a column of the file`)
}
