package main

import (
	"math"
	"testing"
)

// The first rows of the data: scripts/bench_files.py holds the same values
// (SELFTEST), which its numpy generator and its pure Python one must give.
func TestRows(t *testing.T) {
	want := []struct {
		i32     int32
		i64     int64
		f64bits uint64
		f32bits uint32
	}{
		{2065550767, -59571323503, 4739854121213663056, 3318082008},
		{-499938614, 53156995476, 4746427126525655024, 3303121144},
		{-275433930, -43655733289, 13974069565133253110, 3309054576},
		{-1713467645, -31788173569, 13962660957781632032, 1139503712},
	}
	for i, w := range want {
		i32, i64, f64, ok, f32 := row(uint64(i))
		if i32 != w.i32 || i64 != w.i64 || math.Float64bits(f64) != w.f64bits || !ok || math.Float32bits(f32) != w.f32bits {
			t.Errorf("row %d: %d %d %v(%v) %v, want %+v", i, i32, i64, f64, ok, f32, w)
		}
	}
	nulls := 0
	for i := uint64(0); i < 20000; i++ {
		if _, _, _, ok, _ := row(i); !ok {
			nulls++
		}
	}
	if nulls < 800 || nulls > 1200 {
		t.Errorf("%d nulls in 20000 rows, want about 5%%", nulls)
	}
}
