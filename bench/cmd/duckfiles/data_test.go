package main

import (
	"math"
	"testing"
)

// The first rows of the data, which scripts/bench_files.py's own generator
// (numpy, and its pure Python self-test) must give too.
func TestRows(t *testing.T) {
	for i := uint64(0); i < 4; i++ {
		i32, i64, f64, ok, f32 := row(i)
		t.Logf("%d %d %d %v %v %v", i, i32, i64, math.Float64bits(f64), ok, math.Float32bits(f32))
	}
}
