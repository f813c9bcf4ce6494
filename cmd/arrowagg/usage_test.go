package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A mistyped long flag is answered with the closest one.
func TestFlagSuggestion(t *testing.T) {
	pq := testdata + "/sample.parquet"
	for typed, want := range map[string]string{
		"--colums":  "arrowagg: unknown flag: --colums (did you mean --columns?)\n",
		"--fromat":  "arrowagg: unknown flag: --fromat (did you mean --format?)\n",
		"--thread":  "arrowagg: unknown flag: --thread (did you mean --threads?)\n",
		"--memroy":  "arrowagg: unknown flag: --memroy (did you mean --memory?)\n",
		"--zzz":     "arrowagg: unknown flag: --zzz\n",
		"--explian": "arrowagg: unknown flag: --explian (did you mean --explain?)\n",
	} {
		got := runIn(t, context.Background(), env{}, typed, "x", pq)
		assert.Equal(t, exitInput, got.code, typed)
		assert.Equal(t, want, got.stderr, typed)
	}
}

// -a avg is -a mean, as in SQL.
func TestAvgIsMean(t *testing.T) {
	pq := testdata + "/sample.parquet"
	want := runIn(t, context.Background(), env{}, "-f", "json", "-a", "count,mean", pq)
	require.Equal(t, exitOK, want.code, want.stderr)
	got := runIn(t, context.Background(), env{}, "-f", "json", "-a", "count,AVG", pq)
	require.Equal(t, exitOK, got.code, got.stderr)
	assert.Equal(t, want.stdout, got.stdout)
}

// A Parquet file piped into standard input is told to be passed as a path.
func TestParquetOnStdin(t *testing.T) {
	b, err := os.ReadFile(testdata + "/sample.parquet")
	require.NoError(t, err)
	got := runIn(t, context.Background(), env{stdin: bytes.NewReader(b)}, "-")
	assert.Equal(t, exitInput, got.code)
	assert.True(t, strings.HasPrefix(got.stderr, "arrowagg: stdin: reading an Arrow IPC stream: this looks like a Parquet file (it starts with PAR1): pass it as a path"), got.stderr)
}

// --on-error skip leaves out the files that cannot be read, each with a
// note, and counts them; fail (the default) stops at the first.
func TestOnErrorSkip(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(testdata + "/sample.parquet")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(dir+"/a.parquet", good, 0o644))
	require.NoError(t, os.WriteFile(dir+"/b.parquet", good[:len(good)/2], 0o644)) // truncated: no footer
	bad := bytes.Clone(good)
	footer := int(binary.LittleEndian.Uint32(good[len(good)-8:]))
	for i := 4; i < len(good)-8-footer; i++ { // every page overwritten, the footer intact: read errors
		bad[i] ^= 0x5a
	}
	require.NoError(t, os.WriteFile(dir+"/c.parquet", bad, 0o644))

	got := runIn(t, context.Background(), env{}, "-c", "i64", dir)
	assert.Equal(t, exitInput, got.code)
	assert.Contains(t, got.stderr, dir+"/b.parquet")

	want := runIn(t, context.Background(), env{}, "-c", "i64", "-f", "json", dir+"/a.parquet")
	require.Equal(t, exitOK, want.code, want.stderr)
	got = runIn(t, context.Background(), env{}, "-c", "i64", "--on-error", "skip", "-f", "json", dir)
	require.Equal(t, exitOK, got.code, got.stderr)
	assert.Regexp(t, `(?s)^arrowagg: note: skipped `+dir+`/b\.parquet: .*\narrowagg: note: skipped `+dir+`/c\.parquet: .*\n$`, got.stderr)
	var res struct {
		Rows    int64
		Files   int
		Skipped []struct{ Path, Error string }
	}
	require.NoError(t, json.Unmarshal([]byte(got.stdout), &res))
	assert.Equal(t, 1, res.Files)
	assert.Len(t, res.Skipped, 2)
	assert.Equal(t, dir+"/c.parquet", res.Skipped[1].Path)
	assert.NotEmpty(t, res.Skipped[1].Error)
	assert.True(t, strings.HasPrefix(got.stdout, strings.TrimSuffix(strings.Split(want.stdout, "\n  ]")[0], "\n")), "the columns are those of the good file:\n%s\n%s", got.stdout, want.stdout)

	got = runIn(t, context.Background(), env{}, "-c", "i64", "--on-error", "skip", dir)
	require.Equal(t, exitOK, got.code, got.stderr)
	assert.Contains(t, got.stdout, "1200 rows, 1 file, 2 skipped\n")
	got = runIn(t, context.Background(), env{}, "--on-error", "skip", dir+"/b.parquet")
	assert.Equal(t, exitInput, got.code)
	assert.Contains(t, got.stderr, "every input was skipped")
	got = runIn(t, context.Background(), env{}, "--on-error", "maybe", dir)
	assert.Equal(t, "arrowagg: --on-error: unknown mode \"maybe\" (want fail or skip)\n", got.stderr)
}
