package main

import (
	"context"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseByteSize(t *testing.T) {
	good := map[string]int64{
		"0":                   0,
		"1000000":             1000000,
		"512MiB":              512 << 20,
		"512 MiB":             512 << 20,
		"8GiB":                8 << 30,
		"8gib":                8 << 30,
		" 8G ":                8 << 30,
		"8Gi":                 8 << 30,
		"1.5G":                3 << 29,
		"0.5KiB":              512,
		"2.0001B":             2,
		"64K":                 64 << 10,
		"4kB":                 4000,
		"3MB":                 3000000,
		"2GB":                 2000000000,
		"1TiB":                1 << 40,
		"1tb":                 1e12,
		"8388607TiB":          8388607 << 40,
		"123b":                123,
		"4611686018427387904": 1 << 62,
	}
	for in, want := range good {
		got, err := parseByteSize(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
	bad := map[string]string{
		"":                     `invalid size ""`,
		"GiB":                  `invalid size "GiB"`,
		"-1":                   `invalid size "-1"`,
		"8XB":                  `invalid size "8XB"`,
		"8 G B":                `invalid size "8 G B"`,
		"1.2.3G":               `invalid size "1.2.3G"`,
		".":                    `invalid size "."`,
		"1e9":                  `invalid size "1e9"`,
		"8EiB":                 `invalid size "8EiB"`,
		"8388608TiB":           `size "8388608TiB" is too large`,
		"9223372036854775808":  `size "9223372036854775808" is too large`,
		"99999999999999999999": `size "99999999999999999999" is too large`,
		"8388608.5TiB":         `size "8388608.5TiB" is too large`,
	}
	for in, want := range bad {
		_, err := parseByteSize(in)
		if assert.Error(t, err, in) {
			assert.Contains(t, err.Error(), want)
		}
	}
}

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
