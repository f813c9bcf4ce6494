package hostile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The hand-written IPC messages are what Arrow's own readers read, at sizes
// they can hold: the cases differ from these only in the numbers.

// readIPC reads the IPC file (or stream) at path with arrow-go's reader and
// returns the rows of each batch and the sum of column "z".
func readIPC(t *testing.T, path string, file bool) (rows []int64, sum int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var recs []arrow.Record
	if file {
		r, err := ipc.NewFileReader(bytes.NewReader(data), ipc.WithAllocator(mem))
		require.NoError(t, err)
		defer r.Close()
		for i := 0; i < r.NumRecords(); i++ {
			rec, err := r.RecordAt(i)
			require.NoError(t, err)
			recs = append(recs, rec)
		}
	} else {
		r, err := ipc.NewReader(bytes.NewReader(data), ipc.WithAllocator(mem))
		require.NoError(t, err)
		defer r.Release()
		for r.Next() {
			rec := r.Record()
			rec.Retain()
			recs = append(recs, rec)
		}
		require.NoError(t, r.Err())
	}
	for _, rec := range recs {
		require.Equal(t, "z", rec.Schema().Field(0).Name)
		col := rec.Column(0).(*array.Int32)
		for _, v := range col.Int32Values() {
			sum += int64(v)
		}
		assert.Equal(t, 0, col.NullN())
		rows = append(rows, rec.NumRows())
		rec.Release()
	}
	return rows, sum
}

func TestIPCWriters(t *testing.T) {
	dir := t.TempDir()
	z, err := zeroStream(codecZstd, 16<<20)
	require.NoError(t, err)
	l, err := lz4Zeros(4096)
	require.NoError(t, err)
	for _, file := range []bool{true, false} {
		path := filepath.Join(dir, "zstd")
		require.NoError(t, writeInt32IPC(path, file, 4<<20, ipcZstd, 16<<20, z))
		rows, sum := readIPC(t, path, file)
		assert.Equal(t, []int64{4 << 20}, rows, "zstd, file %v", file)
		assert.Zero(t, sum)

		path = filepath.Join(dir, "lz4")
		require.NoError(t, writeInt32IPC(path, file, 1024, ipcLZ4, 4096, l))
		rows, sum = readIPC(t, path, file)
		assert.Equal(t, []int64{1024}, rows, "lz4, file %v", file)
		assert.Zero(t, sum)
	}

	// The header of a body of 64 bytes, then the body: 16 rows.
	path := filepath.Join(dir, "header")
	require.NoError(t, writeBodyHeader(path, 64))
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write(make([]byte, 64))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	rows, sum := readIPC(t, path, false)
	assert.Equal(t, []int64{16}, rows)
	assert.Zero(t, sum)
}
