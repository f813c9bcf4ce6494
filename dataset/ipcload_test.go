package dataset

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ipcCompressed is data compressed as an Arrow IPC buffer of codec (0: LZ4
// frame, 1: zstd), without the length in front.
func ipcCompressed(t *testing.T, codec uint64, data []byte) []byte {
	var b bytes.Buffer
	if codec == 0 {
		w := lz4.NewWriter(&b)
		_, err := w.Write(data)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		return b.Bytes()
	}
	enc, err := zstd.NewWriter(nil)
	require.NoError(t, err)
	defer enc.Close()
	return enc.EncodeAll(data, nil)
}

// ipcTestData is random bytes, then zeros.
func ipcTestData(n int) []byte {
	r := rand.New(rand.NewPCG(8, 9))
	data := make([]byte, n)
	for i := range data[:n/2] {
		data[i] = byte(r.Uint32())
	}
	return data
}

// A compressed IPC buffer decompressed a piece at a time gives the bytes
// and the errors of one read of the whole buffer: whole, truncated,
// damaged, or declaring another size.
func TestIPCDecompressInPieces(t *testing.T) {
	data := ipcTestData(1<<20 + 17)
	ctx := context.Background()
	for _, codec := range []uint64{0, 1} {
		comp := ipcCompressed(t, codec, data)
		damaged := bytes.Clone(comp)
		damaged[len(damaged)/2] ^= 0x33
		inputs := map[string]struct {
			src []byte
			n   int
		}{
			"whole":    {comp, len(data)},
			"less":     {comp, len(data) - 1000},
			"more":     {comp, len(data) + 1},
			"cut":      {comp[:len(comp)/2], len(data)},
			"cut-head": {comp[:3], len(data)},
			"damaged":  {damaged, len(data)},
		}
		for name, in := range inputs {
			t.Run(fmt.Sprintf("codec-%d/%s", codec, name), func(t *testing.T) {
				setStreamSizes(t, streamPageBytes, 1<<62)
				want := make([]byte, in.n)
				wantErr := decompress(ctx, codec, in.src, want)
				setStreamSizes(t, streamPageBytes, 4099)
				got := make([]byte, in.n)
				gotErr := decompress(ctx, codec, in.src, got)
				if wantErr != nil {
					require.Error(t, gotErr)
					assert.Equal(t, wantErr.Error(), gotErr.Error())
					return
				}
				require.NoError(t, gotErr)
				assert.True(t, bytes.Equal(want, got), "other bytes")
			})
		}
	}
}

// countCtx is done from the call of its Err after the first n.
type countCtx struct {
	context.Context
	n, calls int
	cancel   context.CancelFunc
}

func (c *countCtx) Err() error {
	if c.calls++; c.calls > c.n {
		c.cancel()
	}
	return c.Context.Err()
}

// A cancel while a compressed IPC buffer decompresses stops it within the
// piece it comes in: the pieces after it are not decompressed.
func TestIPCDecompressCancel(t *testing.T) {
	const piece = 1 << 16
	setStreamSizes(t, streamPageBytes, piece)
	data := ipcTestData(64 * piece)
	for _, codec := range []uint64{0, 1} {
		comp := ipcCompressed(t, codec, data)
		for _, k := range []int{0, 1, 17, 63} {
			ctx, cancel := context.WithCancel(context.Background())
			out := make([]byte, len(data))
			err := decompress(&countCtx{Context: ctx, n: k, cancel: cancel}, codec, comp, out)
			cancel()
			require.ErrorIs(t, err, context.Canceled, "codec %d, cancelled in piece %d", codec, k)
			assert.True(t, bytes.Equal(data[:k*piece], out[:k*piece]), "codec %d: the %d pieces before the cancel", codec, k)
			assert.Equal(t, make([]byte, len(out)-k*piece), out[k*piece:], "codec %d: the pieces after piece %d", codec, k)
		}
	}
}

// A cancel while a batch's compressed buffer decompresses stops the IPC
// file's aggregation there, with the context's error, and frees the
// buffers.
func TestIPCFileCancelInBuffer(t *testing.T) {
	setStreamSizes(t, streamPageBytes, 4<<10)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := array.NewInt64Builder(mem)
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 20 {
		b.Append(int64(r.Uint64()))
	}
	col := b.NewArray()
	b.Release()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{col}, int64(col.Len()))
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "zstd.arrow")
	writeIPCRecordsOf(t, path, rec, ipc.WithZstd())
	srcs, err := Expand([]string{path})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Done after some hundred of the buffer's 2048 pieces: the run asks
	// for the context's error about 2100 times in all (each piece, and
	// every step around the batch).
	cctx := &lockedCtx{countCtx: countCtx{Context: ctx, n: 300, cancel: cancel}}
	sum, err := aggregateSources(cctx, t, newEngine(t, mem), srcs, Options{Mem: mem, Workers: 2})
	require.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, sum)
	assert.Less(t, cctx.calls, 400, "checks of the context: it went on decompressing")
}

// lockedCtx is a countCtx that several goroutines may ask.
type lockedCtx struct {
	mu sync.Mutex
	countCtx
}

func (c *lockedCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.countCtx.Err()
}

// writeIPCRecordsOf writes rec as an Arrow IPC file.
func writeIPCRecordsOf(t *testing.T, path string, rec arrow.Record, opts ...ipc.Option) {
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := ipc.NewFileWriter(f, append([]ipc.Option{ipc.WithSchema(rec.Schema())}, opts...)...)
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
}

// checkArray refuses string and binary values whose offsets Arrow's reader
// lets through (it checks only the last against the data): a negative
// first offset, a decreasing one, one past the data; in a dictionary too.
// Right offsets pass, sliced or not.
func TestCheckArrayOffsets(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	data := memory.NewBufferBytes([]byte("abcdefgh"))
	mk := func(dt arrow.DataType, offsets ...int64) arrow.Array {
		var raw []byte
		for _, o := range offsets {
			if dt.ID() == arrow.LARGE_STRING || dt.ID() == arrow.LARGE_BINARY {
				raw = binary.LittleEndian.AppendUint64(raw, uint64(o))
			} else {
				raw = binary.LittleEndian.AppendUint32(raw, uint32(int32(o)))
			}
		}
		d := array.NewData(dt, len(offsets)-1, []*memory.Buffer{nil, memory.NewBufferBytes(raw), data}, nil, 0, 0)
		defer d.Release()
		return array.MakeFromData(d)
	}
	for _, dt := range []arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.Binary, arrow.BinaryTypes.LargeString, arrow.BinaryTypes.LargeBinary} {
		for _, tc := range []struct {
			offsets []int64
			err     string
		}{
			{[]int64{0, 3, 3, 8}, ""},
			{[]int64{-16777216, 3, 8}, "the first offset of " + dt.String() + " values is negative (-16777216)"},
			{[]int64{0, 6, 2, 8}, "offset 2 of " + dt.String() + " values (2) is below the one before it (6)"},
			{[]int64{0, 9, 8}, "offset 1 of " + dt.String() + " values (9) is past their 8 bytes"},
		} {
			arr := mk(dt, tc.offsets...)
			err := checkArray(arr)
			if tc.err == "" {
				assert.NoError(t, err, dt)
				sl := array.NewSlice(arr, 1, 3)
				assert.NoError(t, checkArray(sl), dt)
				sl.Release()
			} else {
				assert.ErrorContains(t, err, "corrupt Arrow IPC data: "+tc.err)
				idx := array.NewInt8Builder(mem)
				indices := idx.NewArray()
				idx.Release()
				dict := array.NewDictionaryArray(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: dt}, indices, arr)
				assert.ErrorContains(t, checkArray(dict), tc.err, "a dictionary's values")
				dict.Release()
				indices.Release()
			}
			arr.Release()
		}
	}
}

// The guard reads a flatbuffer table's fields as flatbuffers itself does
// (Table.Offset), whatever the bytes: a field the reader finds is one the
// guard checks. (An odd vtable size once hid a field's children from the
// guard, and the reader allocated two billion of them.)
func TestGuardFieldsAsFlatbuffers(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	odd := 0
	for range 20000 {
		b := make([]byte, 8+r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(24))
		}
		pos := r.IntN(len(b) - 3)
		vt := r.IntN(len(b) - 1)
		binary.LittleEndian.PutUint32(b[pos:], uint32(int32(pos-vt)))
		binary.LittleEndian.PutUint16(b[vt:], uint16(r.IntN(20)))
		if b[vt]%2 == 1 {
			odd++
		}
		tab := fbTable{b: b, pos: int64(pos)}
		for i := range 8 {
			want, ok := flatbufferField(b, pos, i)
			if !ok {
				continue // flatbuffers fails on these bytes: the guard may refuse them
			}
			got, gok := tab.field(i)
			require.True(t, gok, "field %d of %x at %d", i, b, pos)
			if want == 0 {
				assert.Zero(t, got, "field %d of %x at %d: absent", i, b, pos)
			} else {
				assert.Equal(t, int64(pos)+int64(want), got, "field %d of %x at %d", i, b, pos)
			}
		}
	}
	require.Positive(t, odd, "odd vtable sizes")
}

// flatbufferField is flatbuffers' offset of field i of the table at pos of
// b (0: absent), and false where flatbuffers panics on the bytes.
func flatbufferField(b []byte, pos, i int) (off flatbuffers.VOffsetT, ok bool) {
	defer func() {
		if recover() != nil {
			off, ok = 0, false
		}
	}()
	tab := flatbuffers.Table{Bytes: b, Pos: flatbuffers.UOffsetT(pos)}
	return tab.Offset(flatbuffers.VOffsetT(4 + 2*i)), true
}
