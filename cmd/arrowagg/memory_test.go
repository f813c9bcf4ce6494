package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/budget"
)

func TestMemoryFlag(t *testing.T) {
	opts, _, err := parseFlags([]string{"x.parquet"}, nil)
	require.NoError(t, err)
	assert.Equal(t, budget.DefaultBytes(), opts.memory, "the default budget")
	opts, _, err = parseFlags([]string{"--memory", "2GiB", "x.parquet"}, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(2<<30), opts.memory)
	for _, in := range []string{"0", "lots"} {
		_, _, err = parseFlags([]string{"--memory", in, "x.parquet"}, nil)
		assert.ErrorContains(t, err, "--memory: ", in)
	}

	// A file whose page is larger than the budget is refused (exit status
	// 2), naming the file, the column, the need and the budget; with a
	// budget that holds it, the answer comes.
	path := filepath.Join(t.TempDir(), "page.parquet")
	b := array.NewInt64Builder(memory.DefaultAllocator)
	for i := 0; i < 1<<20; i++ {
		b.Append(int64(i))
	}
	col := b.NewArray()
	b.Release()
	rec := array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{col}, 1<<20)
	col.Release()
	defer rec.Release()
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithDictionaryDefault(false), parquet.WithDataPageSize(64<<20)), pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())

	got := runIn(t, context.Background(), env{}, "--memory", "5MiB", "-f", "json", path)
	assert.Equal(t, exitInput, got.code)
	assert.Empty(t, got.stdout)
	assert.Regexp(t, `^arrowagg: `+regexp.QuoteMeta(path)+`: row group 0: column "v": .*needs 8\.0 MiB, the budget is 5\.0 MiB \(--memory\)`+"\n$", got.stderr)
	got = runIn(t, context.Background(), env{}, "--memory", "64MiB", "-f", "csv", "-a", "count,sum", path)
	require.Equal(t, exitOK, got.code, got.stderr)
	assert.Contains(t, got.stdout, "\nv,int64,1048576,,549755289600,")
}

// Groups that outgrow --memory spill to --spill-dir and give the same
// output as with a budget that holds them, which --explain says; with
// --spill-dir none they stop with an error that says what to do.
func TestGroupSpillFlag(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "groups.arrow") // (an IPC file of small batches: their buffers fit a small budget)
	const n, batch = 200_000, 10_000
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
	require.NoError(t, err)
	for lo := 0; lo < n; lo += batch {
		kb, vb := array.NewInt64Builder(memory.DefaultAllocator), array.NewInt64Builder(memory.DefaultAllocator)
		for i := lo; i < lo+batch; i++ {
			kb.Append(int64(i*7919) % 100_003) // (about 100,000 keys of 2 rows)
			vb.Append(int64(i) - n/2)
		}
		kc, vc := kb.NewArray(), vb.NewArray()
		rec := array.NewRecord(schema, []arrow.Array{kc, vc}, batch)
		require.NoError(t, w.Write(rec))
		for _, x := range []interface{ Release() }{rec, kc, vc, kb, vb} {
			x.Release()
		}
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())

	args := []string{"--group-by", "k", "-a", "count,sum,min,max,mean", "-f", "csv"}
	want := runIn(t, context.Background(), env{}, append(args, path)...)
	require.Equal(t, exitOK, want.code, want.stderr)
	spills := t.TempDir()
	got := runIn(t, context.Background(), env{}, append(args, "--memory", "4MiB", "--spill-dir", spills, "--explain", path)...)
	require.Equal(t, exitOK, got.code, got.stderr)
	assert.Equal(t, want.stdout, got.stdout)
	assert.Regexp(t, `the groups outgrew --memory and spilled \d+ times, [0-9.]+ [KM]iB to `+regexp.QuoteMeta(spills), got.stderr)
	left, err := os.ReadDir(spills)
	require.NoError(t, err)
	assert.Empty(t, left, "spill files left behind")

	missing := filepath.Join(dir, "missing")
	bad := runIn(t, context.Background(), env{}, append(args, "--spill-dir", missing, path)...)
	assert.Equal(t, exitInput, bad.code)
	assert.Contains(t, bad.stderr, fmt.Sprintf("--spill-dir: %q is not a directory", missing))

	none := runIn(t, context.Background(), env{}, append(args, "--memory", "4MiB", "--spill-dir", "none", path)...)
	assert.NotEqual(t, exitOK, none.code)
	assert.Contains(t, none.stderr, "over the 4 MiB of --memory, and no spill directory is set: raise --memory or set one")
}
