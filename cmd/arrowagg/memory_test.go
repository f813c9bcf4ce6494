package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
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
