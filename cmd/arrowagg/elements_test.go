package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -c names the elements of lists and maps ("tags[]", "attrs{key}",
// "s.l[]"): aggregated as values, those under null lists not counted, the
// same from an IPC file and from Parquet.
func TestElementColumnsCLI(t *testing.T) {
	dir := opaqueInputs(t)
	// tags [["a"], null, [], ["b", null]] (elements a, b, null: positions
	// 0 to 2); attrs [{k: 1}], [], null, null;
	// s [{l: [1]}, null, {l: null}, {l: []}].
	want := `{
  "rows": 4,
  "files": 1,
  "columns": [
    {"name": "tags[]", "type": "utf8", "count": 2, "null_count": 1, "sum": null, "min": "a", "max": "b", "mean": null, "first": "a", "last": "b", "arg_min": 0, "arg_max": 1},
    {"name": "attrs{key}", "type": "utf8", "count": 1, "null_count": 0, "sum": null, "min": "k", "max": "k", "mean": null, "first": "k", "last": "k", "arg_min": 0, "arg_max": 0},
    {"name": "attrs{value}", "type": "int32", "count": 1, "null_count": 0, "sum": 1, "min": 1, "max": 1, "mean": 1.0, "first": 1, "last": 1, "arg_min": 0, "arg_max": 0},
    {"name": "s.l[]", "type": "int32", "count": 1, "null_count": 0, "sum": 1, "min": 1, "max": 1, "mean": 1.0, "first": 1, "last": 1, "arg_min": 0, "arg_max": 0}
  ]
}
`
	for _, in := range []string{"opaque.arrow", "opaque.parquet"} {
		got := runIn(t, context.Background(), env{}, "-f", "json", "--device", "cpu", "-a", "count,null_count,sum,min,max,mean,first,last,arg_min,arg_max",
			"-c", "tags[],attrs{key},attrs{value},s.l[]", filepath.Join(dir, in))
		require.Equal(t, 0, got.code, got.stderr)
		assert.Empty(t, got.stderr)
		assert.Equal(t, want, got.stdout, in)
	}
}

// A path that does not apply to its column is an input error that says
// why; a path of no column is an unknown column.
func TestElementPathErrorsCLI(t *testing.T) {
	dir := opaqueInputs(t)
	path := filepath.Join(dir, "opaque.parquet")
	for _, c := range []struct{ col, why string }{
		{"tags{key}", `unknown column "tags{key}": column "tags" is list<list: utf8, nullable>, not a map ("{key}" does not apply): name its elements, tags[]`},
		{"big[]", `unknown column "big[]": column "big" is decimal256(40, 2), not a list ("[]" does not apply)`},
		{"attrs[]", `unknown column "attrs[]": column "attrs" is map<utf8, int32, items_nullable>, not a list ("[]" does not apply): name its keys or values, attrs{key} or attrs{value}`},
		{"nope[]", `unknown column "nope[]" (columns: tags, attrs, s.l, big)`},
	} {
		got := runIn(t, context.Background(), env{}, "-c", c.col, path)
		assert.Equal(t, exitInput, got.code, c.col)
		assert.Empty(t, got.stdout, c.col)
		assert.Equal(t, "arrowagg: "+path+": "+c.why+"\n", got.stderr, c.col)
	}
}
