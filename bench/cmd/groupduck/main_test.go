package main

import (
	"context"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuery: a small file whose answers are worked out by hand, rows in
// file order:
//
//	row  k     s  v
//	0    2     b  5
//	1    1     a  null
//	2    null  a  3
//	3    2     b  -1
//	4    1     a  7
//	5    2     b  5     (ties row 0 for the greatest: arg_max is row 0)
//	6    3     c  null  (a group of nulls only)
func TestQuery(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.parquet")
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	_, err = db.Exec(`COPY (SELECT * FROM (VALUES (2, 'b', 5), (1, 'a', NULL), (NULL, 'a', 3), (2, 'b', -1),
		(1, 'a', 7), (2, 'b', 5), (3, 'c', NULL)) t(k, s, v)) TO ` + quoteString(path) + ` (FORMAT parquet, ROW_GROUP_SIZE 2)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	query := func(args ...string) string {
		out := filepath.Join(dir, "out.csv")
		require.NoError(t, run(context.Background(), append(append(args, "-threads", "2", "-o", out), path), io.Discard))
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		return string(b)
	}
	assert.Equal(t, `k,count_all,v_count,v_null_count,v_sum,v_min,v_max,v_mean,v_first,v_last,v_arg_min,v_arg_max
1,2,1,1,7,7,7,7.0,7,7,4,4
2,3,3,0,9,-1,5,3.0,5,5,3,0
3,1,0,1,,,,,,,,
,1,1,0,3,3,3,3.0,3,3,2,2
`, query("-group-by", "k", "-c", "v", "-a", "arg_max,arg_min,last,first,mean,max,min,sum,null_count,count"))
	assert.Equal(t, `s,k,count_all,v_sum
a,1,1,7
a,,1,3
b,2,1,-1
`, query("-group-by", "s,k", "-c", "v", "-a", "sum", "-where", "v < 5 or v > 6"))
	assert.Equal(t, "k,count_all\n1,2\n2,3\n3,1\n,1\n", query("-group-by", "k"))

	_, err = request{file: path, keys: []string{"k"}, columns: []string{"v"}, aggs: agg.ApproxDistinct}.query()
	assert.ErrorContains(t, err, "approx_distinct")
}
