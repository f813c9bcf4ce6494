package testdatagen

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The committed files are what the generator makes now, byte for byte (run
// make testdata after changing it), and generating is deterministic.
func TestCommittedFilesAreCurrent(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	for _, d := range dirs {
		require.NoError(t, Write(d))
	}
	var total int64
	for _, f := range Files {
		committed, err := os.ReadFile(filepath.Join("..", "..", "testdata", f.Name))
		require.NoError(t, err)
		for _, d := range dirs {
			fresh, err := os.ReadFile(filepath.Join(d, f.Name))
			require.NoError(t, err)
			assert.True(t, string(committed) == string(fresh), "testdata/%s differs from the generator's output: run make testdata", f.Name)
		}
		total += int64(len(committed))
	}
	assert.Less(t, total, int64(2<<20), "testdata stays under 2 MB")
}

func TestRecord(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, f := range Files {
		rec := Record(mem, f, 0, f.Chunk)
		assert.Equal(t, int64(f.Chunk), rec.NumRows())
		assert.True(t, rec.Schema().Equal(Schema(f)))
		for _, name := range f.Omit {
			assert.Empty(t, rec.Schema().FieldIndices(name), name)
		}
		assert.Equal(t, len(specs())-len(f.Omit), int(rec.NumCols()))
		rec.Release()
	}
}
