package main

import (
	"context"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGPUMemoryFlag(t *testing.T) {
	for in, want := range map[string]int64{"8GiB": 8 << 30, "512MiB": 512 << 20, "1048576": 1 << 20, "0": 0} {
		opts, done, err := parseFlags([]string{"--gpu-memory", in, "x.parquet"}, nil)
		require.NoError(t, err, in)
		assert.False(t, done)
		assert.Equal(t, want, opts.gpuMemory, in)
	}
	opts, _, err := parseFlags([]string{"x.parquet"}, nil)
	require.NoError(t, err)
	assert.Zero(t, opts.gpuMemory, "no cap by default")

	// On the CPU the cap changes nothing.
	pq := testdata + "/sample.parquet"
	want := runIn(t, context.Background(), env{}, "-f", "json", "--device", "cpu", pq)
	require.Equal(t, exitOK, want.code, want.stderr)
	got := runIn(t, context.Background(), env{}, "-f", "json", "--device", "cpu", "--gpu-memory", "512MiB", pq)
	require.Equal(t, exitOK, got.code, got.stderr)
	assert.Equal(t, want.stdout, got.stdout)

	// A bad size is bad usage: exit status 2, one line.
	for _, in := range []string{"lots", "-5GiB", "1e400", "12PB"} {
		got := runIn(t, context.Background(), env{}, "--gpu-memory", in, pq)
		assert.Equal(t, exitInput, got.code, in)
		assert.Empty(t, got.stdout)
		assert.Regexp(t, `^arrowagg: --gpu-memory: invalid size "`+regexp.QuoteMeta(in)+`" \(want bytes, or a number and a unit: 8GiB, 512MiB, 1\.5G\)`+"\n$", got.stderr)
	}
	got = runIn(t, context.Background(), env{}, "--gpu-memory=100000000TiB", pq)
	assert.Equal(t, exitInput, got.code)
	assert.Equal(t, "arrowagg: --gpu-memory: size \"100000000TiB\" is too large\n", got.stderr)
	got = runIn(t, context.Background(), env{}, "--gpu-memory", pq)
	assert.Equal(t, exitInput, got.code, "the flag takes a value")
}
