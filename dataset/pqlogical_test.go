package dataset

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
)

// Columns of logical types arrow-go v17 does not know (GEOMETRY,
// GEOGRAPHY, a type newer than the reader) are counted, their type naming
// the logical type and the physical type's Arrow type; the file's other
// columns are aggregated (its footer used to fail as corrupt data, then the
// columns were left out).
func TestUnknownLogicalTypesCounted(t *testing.T) {
	cases := []struct {
		file    string
		counted map[string]string // name: type
		read    []string
		rows    int64
	}{
		{"geospatial/geospatial.parquet", map[string]string{"geometry": "GEOMETRY (binary)"}, []string{"group", "wkt", "geometry"}, 196},
		{"geospatial/crs-geography.parquet", map[string]string{"geography": "GEOGRAPHY (binary)"}, []string{"wkt", "geography"}, 1},
		{"unknown-logical-type.parquet", map[string]string{"column with unknown type": "logical type 2555 (binary)"}, []string{"column with known type", "column with unknown type"}, 3},
	}
	for _, c := range cases {
		path := parquetTesting(t, filepath.FromSlash(c.file))
		for _, opts := range []Options{{}, {ArrowDecode: true}} {
			sum, sel, err := aggregatePaths(context.Background(), t, memory.DefaultAllocator, []string{path}, nil, opts)
			require.NoError(t, err, c.file)
			assert.Equal(t, c.rows, sum.Rows, c.file)
			assert.Empty(t, sel.Skipped, c.file)
			var read []string
			for _, r := range sum.Results {
				read = append(read, r.Name)
				if typ, ok := c.counted[r.Name]; ok {
					assert.Equal(t, typ, r.Type.String(), c.file)
					assert.Equal(t, c.rows, r.Count+r.NullCount, "%s %s", c.file, r.Name)
					assert.Nil(t, r.Min, c.file)
					assert.Nil(t, r.Max, c.file)
				}
			}
			assert.Equal(t, c.read, read, c.file)
		}
	}
}

// Every geospatial file of parquet-testing reads, its geometry or
// geography column counted: as many values and nulls as its wkt column,
// the same shapes as text.
func TestGeospatialCorpusReads(t *testing.T) {
	dir := filepath.Dir(parquetTesting(t, "geospatial/geospatial.parquet"))
	files, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
	require.NoError(t, err)
	require.Len(t, files, 10)
	for _, f := range files {
		sum, sel, err := aggregatePaths(context.Background(), t, memory.DefaultAllocator, []string{f}, nil, Options{})
		require.NoError(t, err, f)
		assert.Empty(t, sel.Skipped, f)
		byName := map[string][2]int64{}
		geo := ""
		for _, r := range sum.Results {
			byName[r.Name] = [2]int64{r.Count, r.NullCount}
			if _, ok := r.Type.(*logicalType); ok {
				geo = r.Name
			}
		}
		require.NotEmpty(t, geo, f)
		if wkt, ok := byName["wkt"]; ok {
			assert.Equal(t, wkt, byName[geo], f)
		}
	}
}

// hideLogicalTypes renumbers a logicalType field's short and long headers
// in place, past SchemaElement's fields.
func TestHideLogicalTypes(t *testing.T) {
	short := []byte{0x1c, 0x00, 0x00} // field 10 (after 9), a struct
	fix := hideLogicalTypes(short, []unknownLogicalType{{field: logicalTypeField{hdrAt: 0, hdrPrev: 9}}})
	assert.Equal(t, []byte{0xfc, 0x00, 0x00}, fix.footer)
	assert.Equal(t, []byte{0x1c, 0x00, 0x00}, short, "the footer read is not changed")
	long := []byte{0x0c, 20, 0x00}
	fix = hideLogicalTypes(long, []unknownLogicalType{{field: logicalTypeField{hdrAt: 0}}})
	assert.Equal(t, []byte{0x0c, 120, 0x00}, fix.footer)
	assert.Len(t, fix.unknown, 1)
}

// incorrect_map_schema.parquet: a MAP of optional keys (as Presto wrote
// them), which arrow-go refuses, is counted as the list of key-value
// structs it is: one map, not null.
func TestMapOfOptionalKeys(t *testing.T) {
	got, sum := aggregateFile(t, memory.DefaultAllocator, []string{parquetTesting(t, "incorrect_map_schema.parquet")}, Options{}, agg.Default)
	assert.EqualValues(t, 1, sum.Rows)
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "my_map list<key_value: struct<key: utf8, value: utf8>, nullable> count=1 nulls=0")
}

// mapsAsLists rewrites a MAP's converted type and logical type member to
// LIST, in place.
func TestMapsAsLists(t *testing.T) {
	footer := []byte{2, 0x2c}
	mapsAsLists(footer, []schemaElementAt{{converted: convertedMap, convertedAt: 0, member: logicalMap, memberAt: 1}})
	assert.Equal(t, []byte{6, 0x3c}, footer)
}
