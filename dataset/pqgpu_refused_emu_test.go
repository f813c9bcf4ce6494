//go:build emu

package dataset

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/internal/emugpu"
)

// TestGPUPagesRefusedColumns: the CPU page path's columns that the GPU's
// page kernels cannot take say why in their plans when the engine has a
// page GPU it could have used (--device gpu here), and not when it has
// none (--device cpu); the answers are the CPU's.
func TestGPUPagesRefusedColumns(t *testing.T) {
	const rows = 3000
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "d", Type: &arrow.Decimal128Type{Precision: 38, Scale: 2}, Nullable: true},
		{Name: "ts", Type: arrow.FixedWidthTypes.Timestamp_ns, Nullable: true},
		{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true}), Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for r := 0; r < rows; r++ {
		b.Field(0).(*array.Int64Builder).Append(int64(r * 7))
		b.Field(1).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(r) - 1500))
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(r) * 1e9))
		sb := b.Field(3).(*array.StructBuilder)
		if r%5 == 0 {
			sb.AppendNull()
		} else {
			sb.Append(true)
		}
		sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(r))
	}
	rec := b.NewRecord()
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "refused.parquet")
	writePQ(t, path, rec, pqConfig{props: []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithMaxRowGroupLength(1000)}, arrow: []pqarrow.WriterOption{pqarrow.WithDeprecatedInt96Timestamps(true)}})

	ctx := context.Background()
	cpu := aggregateOn(t, ctx, path, engine.DeviceCPU, nil)
	gpu := aggregateOn(t, ctx, path, engine.DeviceGPU, &emugpu.Backend{})
	const not = "not for the gpu's page kernels: "
	want := map[string]string{
		"d":   not + "decimals stored as FIXED_LEN_BYTE_ARRAY of 16 bytes",
		"ts":  not + "INT96 timestamps",
		"s.x": not + "a column nested in optional groups (definition levels above 1)",
	}
	for i, c := range cpu.Results {
		assertSameColumn(t, c.Name, c, gpu.Results[i])
		assert.NotContains(t, cpu.Plan[i].Reason, not, "%s under --device cpu", c.Name)
		p := gpu.Plan[i]
		if c.Name == "i" {
			assert.Equal(t, "gpu", p.BackendName())
			continue
		}
		why, ok := want[c.Name]
		require.True(t, ok, c.Name)
		assert.Equal(t, "cpu", p.BackendName(), c.Name)
		assert.Equal(t, pageReason+" ("+why+")", p.Reason, c.Name)
	}
}
