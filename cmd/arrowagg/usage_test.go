package main

import (
	"bytes"
	"context"
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
