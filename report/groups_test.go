package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"
)

// Groups past one piece of rows (formatRows) come out whole and in order,
// in CSV and JSON; a string key's quotes and a null are as in Write.
func TestWriteGroupsManyRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n = 50000
	kb, vb := array.NewStringBuilder(mem), array.NewFloat64Builder(mem)
	for i := range n {
		kb.Append(fmt.Sprintf("k,%06d", i))
		if i%7 == 0 {
			vb.AppendNull()
		} else {
			vb.Append(float64(i) / 4)
		}
	}
	k, v := kb.NewArray(), vb.NewArray()
	kb.Release()
	vb.Release()
	rec := array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.BinaryTypes.String}, {Name: "v_sum", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil),
		[]arrow.Array{k, v}, n)
	k.Release()
	v.Release()
	defer rec.Release()

	var csv bytes.Buffer
	require.NoError(t, WriteGroups(&csv, CSV, Groups{Rows: n, Files: 1, Kept: n, Record: rec}))
	lines := strings.Split(strings.TrimSuffix(csv.String(), "\n"), "\n")
	require.Len(t, lines, n+1)
	require.Equal(t, "k,v_sum", lines[0])
	require.Equal(t, `"k,000000",`, lines[1])
	require.Equal(t, `"k,049999",12499.75`, lines[n])

	var js bytes.Buffer
	require.NoError(t, WriteGroups(&js, JSON, Groups{Rows: n, Files: 1, Kept: n, Record: rec}))
	var doc struct {
		Kept   int64
		Groups []map[string]any
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &doc))
	require.Len(t, doc.Groups, n)
	for i := 0; i < n; i += 997 {
		require.Equal(t, fmt.Sprintf("k,%06d", i), doc.Groups[i]["k"])
	}
	require.Nil(t, doc.Groups[7]["v_sum"])
	require.Equal(t, 2.0, doc.Groups[8]["v_sum"])
}
