package dataset

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
)

// A footer that says 0 rows over row groups that have some is read as the
// row groups say (as Arrow C++ reads it); another disagreement is an error.
func TestFooterRowsZero(t *testing.T) {
	_, pqf, err := probeParquet(pathSource(t, filepath.Join(testdata, "sample.parquet")))
	require.NoError(t, err)
	rows := pqf.meta.NumRows
	require.Positive(t, rows)
	r := &parquetRun{pqf: pqf}
	pqf.meta.NumRows = 0
	_, err = r.planTasks()
	require.NoError(t, err)
	assert.Equal(t, rows, r.rows)
	pqf.meta.NumRows = rows + 1
	_, err = r.planTasks()
	assert.EqualError(t, err, fmt.Sprintf("the row groups have %d rows, the footer says %d", rows, rows+1))
}

// repeated_no_annotation.parquet: a footer of 0 rows over 6, and a
// repeated group without LIST annotation, counted as a list (null where its
// optional parent is, rows 1 and 2).
func TestRepeatedNoAnnotation(t *testing.T) {
	got, sum := aggregateFile(t, memory.DefaultAllocator, []string{parquetTesting(t, "repeated_no_annotation.parquet")}, Options{}, agg.Default)
	assert.EqualValues(t, 6, sum.Rows)
	require.Len(t, got, 2)
	assert.Contains(t, got[0], "id int32 count=6 nulls=0 sum=21")
	assert.Contains(t, got[1], "phoneNumbers.phone list<item: struct<number: int64, kind: utf8>, nullable> count=4 nulls=2")
}
