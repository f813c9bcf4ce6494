package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFile: the file DuckDB writes holds row i as makeRow computes it from
// gen.Mix, every key column has its number of distinct values, and about 5%
// of each value column is null. 2999 rows is prime (every multiplier is
// prime to it), 3000 makes keyWeyl raise multipliers to one prime to N, and
// k50m then has N/2 values.
func TestFile(t *testing.T) {
	for _, n := range []int64{2999, 3000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "g.parquet")
			require.NoError(t, run(context.Background(), []string{"-rows", fmt.Sprint(n), "-threads", "2", "-options", "ROW_GROUP_SIZE 1000", "-o", path}))
			db, err := sql.Open("duckdb", "")
			require.NoError(t, err)
			defer db.Close()
			rows, err := db.Query("SELECT k10, k1k, k1m, k50m, s1k, i32, i64, f64, sel FROM read_parquet(" + quoteString(path) + ")")
			require.NoError(t, err)
			defer rows.Close()
			var i int64
			distinct := make([]map[any]bool, len(keySpecs))
			for c := range distinct {
				distinct[c] = map[any]bool{}
			}
			nulls := [3]int{}
			for rows.Next() {
				var got row
				var i32, i64 sql.NullInt64
				var f64 sql.NullFloat64
				require.NoError(t, rows.Scan(&got.keys[0], &got.keys[1], &got.keys[2], &got.keys[3], &got.s1k, &i32, &i64, &f64, &got.sel))
				got.i32, got.i32ok = int32(i32.Int64), i32.Valid
				got.i64, got.i64ok = i64.Int64, i64.Valid
				got.f64, got.fok = f64.Float64, f64.Valid
				want := makeRow(i, n)
				if !want.i32ok {
					want.i32 = 0
				}
				if !want.i64ok {
					want.i64 = 0
				}
				if !want.fok {
					want.f64 = 0
				}
				require.Equal(t, want, got, "row %d", i)
				for c := range 4 {
					distinct[c][got.keys[c]] = true
				}
				distinct[4][got.s1k] = true
				for j, ok := range []bool{got.i32ok, got.i64ok, got.fok} {
					if !ok {
						nulls[j]++
					}
				}
				i++
			}
			require.NoError(t, rows.Err())
			assert.Equal(t, n, i, "rows")
			for c, k := range keySpecs {
				assert.Len(t, distinct[c], int(min(k.distinct(n), n)), k.name)
			}
			for j, name := range []string{"i32", "i64", "f64"} {
				assert.InDelta(t, 0.05, float64(nulls[j])/float64(n), 0.015, "%s: %d nulls", name, nulls[j])
			}
		})
	}
}

// TestMakeRow: the oracle itself, against values worked out by hand from
// splitmix64's first outputs.
func TestMakeRow(t *testing.T) {
	w := keyWeyl(0, 3000)
	assert.Equal(t, int64(1), gcd(w.a, 3000))
	assert.Equal(t, int64(1859), w.a, "round(3000 * 0.618...) = 1854; 1855 to 1858 share 2, 3 or 5 with 3000")
	r := makeRow(0, 3000)
	// gen.Mix(0) = 0xe220a8397b1dcdaf, splitmix64's first output from 0.
	assert.Equal(t, int32(int64(0xe220a839)-1<<31), r.i32)
	assert.True(t, r.i32ok, "0xcdaf >= 3277")
}
