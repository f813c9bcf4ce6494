package engine

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/column"
)

// BenchmarkSmallCall is the fixed cost of aggregating a small record batch
// (1024 int32 values, which the CPU takes) through Engine.AggregateRecord
// and through a Residency that keeps it on the host.
func BenchmarkSmallCall(b *testing.B) {
	ctx := context.Background()
	bld := array.NewInt32Builder(memory.DefaultAllocator)
	for i := range 1024 {
		bld.Append(int32(i))
	}
	arr := bld.NewArray()
	defer arr.Release()
	rec := array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int32}}, nil), []arrow.Array{arr}, 1024)
	defer rec.Release()
	f := newFakeResident()
	e, err := New(WithGPU(f), WithCalibration(splitCalibration()), WithThreads(2))
	require.NoError(b, err)
	cpu, err := New(WithDevice(DeviceCPU), WithThreads(2))
	require.NoError(b, err)
	req := Request{}
	b.Run("AggregateRecord/cpu", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cpu.AggregateRecord(ctx, rec, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AggregateRecord/auto", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.AggregateRecord(ctx, rec, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	rz, err := e.NewResidency(1 << 30)
	require.NoError(b, err)
	defer rz.Close()
	res, err := rz.UploadRecord(ctx, rec)
	require.NoError(b, err)
	defer res.Release()
	b.Run("Resident/auto", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := res.Results(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSmallView is the fixed cost of UpdateView on 1024 int32 values,
// which the CPU takes, on a CPU-only engine and on one with a GPU (which
// asks whether the CPU is certain to be faster first).
func BenchmarkSmallView(b *testing.B) {
	ctx := context.Background()
	vals := make([]byte, 4096)
	v := column.View{Type: arrow.PrimitiveTypes.Int32, Kind: column.Int32, Len: 1024, Values: vals}
	cpu, err := New(WithDevice(DeviceCPU), WithThreads(2))
	require.NoError(b, err)
	auto, err := New(WithGPU(newFakeResident()), WithCalibration(splitCalibration()), WithThreads(2))
	require.NoError(b, err)
	for _, m := range []struct {
		name string
		e    *Engine
	}{{"cpu", cpu}, {"auto", auto}} {
		b.Run(m.name, func(b *testing.B) {
			for b.Loop() {
				s := newState(column.FamilySigned)
				if err := m.e.UpdateView(ctx, &v, &s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
