package dataset

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/engine"
)

// withMmap runs f with IPC files mapped (true) or read with ReadAt.
func withMmap(t *testing.T, mapped bool, f func(t *testing.T)) {
	t.Helper()
	t.Run(map[bool]string{true: "mmap", false: "readat"}[mapped], func(t *testing.T) {
		old := useMmap
		useMmap = mapped
		defer func() { useMmap = old }()
		f(t)
	})
}

var ipcSchema = arrow.NewSchema([]arrow.Field{
	{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "d", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, Nullable: true},
	{Name: "st", Type: arrow.StructOf(
		arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	), Nullable: true},
	{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int16), Nullable: true},
	{Name: "u8", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
}, nil)

// ipcRecord is batch k (of n rows) of the IPC tests: every kind of column
// the in-place decoder lays out, nulls, floats whose sums round, a
// dictionary (with grow, one that grows from batch to batch: deltas, which
// arrow-go writes in streams only), and a list column (skipped, but laid
// out).
func ipcRecord(mem memory.Allocator, k, n int, grow bool) arrow.Record {
	bld := array.NewRecordBuilder(mem, ipcSchema)
	defer bld.Release()
	words := []string{"pear", "apple", "fig", "kiwi", "plum", "date", "lime"}
	dictLen := 5
	if grow {
		dictLen = min(2+k, len(words))
	}
	for i := 0; i < n; i++ {
		r := k*n + i
		h := uint64(r)*0x9E3779B97F4A7C15 + 7
		if r%13 == 0 {
			bld.Field(0).AppendNull()
		} else {
			bld.Field(0).(*array.Int64Builder).Append(int64(h))
		}
		switch {
		case r%17 == 0:
			bld.Field(1).AppendNull()
		case r%1001 == 0:
			bld.Field(1).(*array.Float64Builder).Append(math.Copysign(0, -1))
		default:
			bld.Field(1).(*array.Float64Builder).Append(float64(int64(h>>11))*1e-9 - 3.3e6)
		}
		if r%11 == 0 {
			bld.Field(2).AppendNull()
		} else {
			bld.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("s%07d", h%10000019))
		}
		st := bld.Field(4).(*array.StructBuilder)
		if r%19 == 0 {
			st.AppendNull()
		} else {
			st.Append(true)
			st.FieldBuilder(0).(*array.Int32Builder).Append(int32(h >> 33))
			st.FieldBuilder(1).(*array.BooleanBuilder).Append(h&4 != 0)
		}
		lb := bld.Field(5).(*array.ListBuilder)
		lb.Append(true)
		for j := 0; j < r%3; j++ {
			lb.ValueBuilder().(*array.Int16Builder).Append(int16(j))
		}
		bld.Field(6).(*array.Uint8Builder).Append(uint8(h >> 56))
		bld.Field(3).AppendNull() // replaced below
	}
	// The dictionary column: built by hand so that each batch's
	// dictionary extends the previous one's.
	db := array.NewStringBuilder(mem)
	defer db.Release()
	db.AppendValues(words[:dictLen], nil)
	dict := db.NewArray()
	defer dict.Release()
	ib := array.NewInt32Builder(mem)
	defer ib.Release()
	for i := 0; i < n; i++ {
		if i%5 == 0 {
			ib.AppendNull()
		} else {
			ib.Append(int32((k*n + i) % dictLen))
		}
	}
	idx := ib.NewArray()
	defer idx.Release()
	d := array.NewDictionaryArray(ipcSchema.Field(3).Type, idx, dict)
	defer d.Release()
	rec := bld.NewRecord()
	defer rec.Release()
	cols := append([]arrow.Array{}, rec.Columns()...)
	cols[3] = d
	return array.NewRecord(ipcSchema, cols, rec.NumRows())
}

// writeIPCRecords writes batches of the given sizes as an IPC file (file
// true) or stream at path.
func writeIPCRecords(t testing.TB, path string, file bool, sizes []int, opts ...ipc.Option) {
	writeIPCBatches(t, path, file, false, sizes, opts...)
}

// writeIPCBatches is writeIPCRecords, with dictionaries that grow (deltas
// in a stream written WithDictionaryDeltas) when grow is set.
func writeIPCBatches(t testing.TB, path string, file, grow bool, sizes []int, opts ...ipc.Option) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	w := newIPCWriter(t, f, file, append([]ipc.Option{ipc.WithSchema(ipcSchema)}, opts...)...)
	for k, n := range sizes {
		rec := ipcRecord(memory.DefaultAllocator, k, n, grow)
		require.NoError(t, w.Write(rec))
		rec.Release()
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
}

// aggregateIPCWith opens path and aggregates every column with aggs; it checks
// that every allocation is freed.
func aggregateIPCWith(t *testing.T, path string, aggs agg.Set, threads int, progress func(int64)) (string, error) {
	t.Helper()
	return aggregateIPCOpts(t, path, Options{Progress: progress}, aggs, threads)
}

// aggregateIPCReader aggregates the IPC stream held by file path as read
// from standard input: through the stream reader, never in place.
func aggregateIPCReader(t *testing.T, path string, aggs agg.Set, threads int) (string, error) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return aggregateIPCOpts(t, "-", Options{Stdin: bytes.NewReader(data)}, aggs, threads)
}

// aggregateIPCOpts aggregates path ("-": opts.Stdin) with opts, on threads
// goroutines of a CPU engine, as JSON.
func aggregateIPCOpts(t *testing.T, path string, opts Options, aggs agg.Set, threads int) (string, error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	eng, err := engine.New(engine.WithDevice(engine.DeviceCPU), engine.WithAllocator(mem), engine.WithThreads(threads))
	require.NoError(t, err)
	defer eng.Close()
	srcs, err := Expand([]string{path})
	if err != nil {
		return "", err
	}
	opts.Mem = mem
	d, err := Open(context.Background(), srcs, opts)
	if err != nil {
		return "", err
	}
	defer d.Close()
	sel, err := d.Select(nil)
	require.NoError(t, err)
	sum, err := d.Aggregate(context.Background(), eng, sel, AggregateOptions{Aggs: aggs})
	if err != nil {
		return "", err
	}
	return jsonOf(t, sum.Rows, sum.Files, sum.Results), nil
}

// inPlace reads IPC file path through the in-place reader (not the stream
// it holds) and returns its error.
func inPlace(t *testing.T, path string) error {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	srcs, err := Expand([]string{path})
	require.NoError(t, err)
	d, err := Open(context.Background(), srcs, Options{Mem: mem})
	require.NoError(t, err)
	defer d.Close()
	sel, err := d.Select(nil)
	require.NoError(t, err)
	byName := map[string]int{}
	for k, l := range sel.Leaves {
		byName[l.Name] = k
	}
	src := newPartial(sel.Leaves, agg.Default)
	_, err = d.aggregateIPCFile(context.Background(), newEngine(t, mem), 0, sel.Leaves, agg.Default, src, byName, nil)
	return err
}

// embeddedStream writes the stream an IPC file holds (between its magic
// and its footer) to a file of its own and returns its path: what the
// stream path reads of the file.
func embeddedStream(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	end, err := ipcFooterStart(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), filepath.Base(path)+".arrows")
	require.NoError(t, os.WriteFile(out, data[ipcFileStart:end], 0o644))
	return out
}

const orderedAggs = agg.Default | agg.First | agg.Last | agg.ArgMin | agg.ArgMax

// IPC files read in place give what the stream reader gives for the same
// batches (their stream on standard input), to the last bit, mapped or read
// with ReadAt, compressed or not, for every thread count, ordered
// aggregates included, and so does the stream as a file (walked in place
// when mapped); and progress adds up to the file's size.
func TestIPCFileInPlaceMatchesStream(t *testing.T) {
	dir := t.TempDir()
	sizes := []int{70_000, 1, 0, 140_000, 65_536}
	for _, c := range []struct {
		name string
		opts []ipc.Option
	}{{"plain", nil}, {"lz4", []ipc.Option{ipc.WithLZ4()}}, {"zstd", []ipc.Option{ipc.WithZstd()}}} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name+".arrow")
			writeIPCRecords(t, path, true, sizes, c.opts...)
			stream := embeddedStream(t, path)
			for _, mapped := range []bool{true, false} {
				withMmap(t, mapped, func(t *testing.T) {
					require.NoError(t, inPlace(t, path))
					if mapped {
						require.NoError(t, inPlace(t, stream), "a stream file walked in place")
					} else {
						require.ErrorIs(t, inPlace(t, stream), errNotInPlace, "a stream not mapped: the stream reader")
					}
					for _, aggs := range []agg.Set{agg.Default, orderedAggs} {
						for _, threads := range raceSubset([]int{5, 1, 2}) {
							want, err := aggregateIPCReader(t, stream, aggs, threads)
							require.NoError(t, err)
							inStream, err := aggregateIPCWith(t, stream, aggs, threads, nil)
							require.NoError(t, err)
							assert.Equal(t, want, inStream, "the stream file in place, aggs %v, %d threads", aggs, threads)
							var done atomic.Int64
							got, err := aggregateIPCWith(t, path, aggs, threads, func(n int64) { done.Add(n) })
							require.NoError(t, err)
							assert.Equal(t, want, got, "aggs %v, %d threads", aggs, threads)
							fi, err := os.Stat(path)
							require.NoError(t, err)
							assert.Equal(t, fi.Size(), done.Load(), "progress")
						}
					}
				})
			}
		})
	}
}

// The testdata IPC file is read in place, and gives what its stream gives.
// (The golden tests of cmd/arrowagg compare it with its output before.)
func TestIPCFileSampleInPlace(t *testing.T) {
	path := filepath.Join(testdata, "sample.arrow")
	for _, mapped := range []bool{true, false} {
		withMmap(t, mapped, func(t *testing.T) {
			require.NoError(t, inPlace(t, path))
			for _, aggs := range []agg.Set{agg.Default, orderedAggs} {
				want, err := aggregateIPCReader(t, embeddedStream(t, path), aggs, 2)
				require.NoError(t, err)
				got, err := aggregateIPCWith(t, path, aggs, 2, nil)
				require.NoError(t, err)
				assert.Equal(t, want, got)
			}
		})
	}
}

// Types the in-place decoder does not lay out send the file down the
// stream path, with the same answer.
func TestIPCFileFallsBackToStream(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := array.NewRunEndEncodedBuilder(mem, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64)
	defer b.Release()
	b.Append(3)
	b.ValueBuilder().(*array.Int64Builder).Append(7)
	ree := b.NewArray()
	defer ree.Release()
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	ib.AppendValues([]int64{1, 2, 3}, nil)
	i64 := ib.NewArray()
	defer i64.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "r", Type: ree.DataType(), Nullable: true}, {Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{ree, i64}, 3)
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "ree.arrow")
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
	require.ErrorIs(t, inPlace(t, path), errNotInPlace)
	got, err := aggregateIPCWith(t, path, agg.Default, 2, nil)
	require.NoError(t, err)
	assert.Contains(t, got, `"sum": 6`)
}

// A file truncated (or rewritten) while it is read gives an error naming
// it, or the right answer if the read was over, never a crash: the
// truncation comes from another goroutine at several points of the read.
func TestIPCFileTruncatedWhileRead(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "orig.arrow")
	writeIPCRecords(t, orig, true, []int{400_000, 400_000, 400_000, 400_000})
	data, err := os.ReadFile(orig)
	require.NoError(t, err)
	want, err := aggregateIPCWith(t, orig, agg.Default, 2, nil)
	require.NoError(t, err)
	size := int64(len(data))
	for _, mapped := range []bool{true, false} {
		withMmap(t, mapped, func(t *testing.T) {
			errs := truncatedWhileRead(t, filepath.Join(dir, "cut.arrow"), data, want,
				raceSubset([]int64{size / 8, size / 3, size / 2, 3 * size / 4, size - 64}), raceSubset([]int64{0, size / 4, size / 2, size - 4096}), false)
			assert.Positive(t, errs)
		})
	}
}

// truncatedWhileRead writes data to path once per pair of points, reads it
// with aggregateIPCWith (2 threads) and truncates it to each size of to
// from another goroutine once the read reported at bytes of progress: the
// read gives an error naming path (with changed, one that wraps
// errFileChanged: the change, not corrupt bytes), or want. It returns the
// number of errors.
func truncatedWhileRead(t *testing.T, path string, data []byte, want string, at, to []int64, changed bool) int {
	t.Helper()
	errs := 0
	for _, at := range at {
		for _, to := range to {
			require.NoError(t, os.WriteFile(path, data, 0o644))
			trigger := make(chan struct{})
			var once atomic.Bool
			var read atomic.Int64
			done := make(chan struct{})
			go func() {
				defer close(done)
				select {
				case <-trigger:
					assert.NoError(t, os.Truncate(path, to))
				case <-time.After(20 * time.Second):
				}
			}()
			got, err := aggregateIPCWith(t, path, agg.Default, 2, func(n int64) {
				if read.Add(n) >= at && once.CompareAndSwap(false, true) {
					close(trigger)
					time.Sleep(20 * time.Millisecond) // let the truncation land mid-read
				}
			})
			if once.CompareAndSwap(false, true) {
				close(trigger)
			}
			<-done
			if err != nil {
				errs++
				t.Logf("truncated at %d to %d: %v", at, to, err)
				var e *Error
				require.ErrorAs(t, err, &e, "truncated at %d to %d", at, to)
				assert.Equal(t, path, e.Path)
				if changed {
					assert.ErrorIs(t, err, errFileChanged, "the change, not corrupt bytes")
				}
				continue
			}
			assert.Equal(t, want, got, "truncated at %d to %d: no error, so the right answer", at, to)
		}
	}
	return errs
}

// compressedClaim returns IPC bytes (a file, or a stream) of one
// zstd-compressed batch whose int64 buffer claims 64 GiB uncompressed.
func compressedClaim(t *testing.T, file bool) []byte {
	mem := memory.NewGoAllocator()
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	ib.AppendValues(make([]int64, 1000), nil)
	col := ib.NewArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{col}, 1000)
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "claim")
	f, err := os.Create(path)
	require.NoError(t, err)
	var w interface {
		Write(arrow.Record) error
		Close() error
	}
	if file {
		fw, err := ipc.NewFileWriter(f, ipc.WithSchema(schema), ipc.WithZstd())
		require.NoError(t, err)
		w = fw
	} else {
		w = ipc.NewWriter(f, ipc.WithSchema(schema), ipc.WithZstd())
	}
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var want [8]byte
	binary.LittleEndian.PutUint64(want[:], 8000)
	at := bytes.LastIndex(data, want[:])
	require.Positive(t, at, "the length prefix of the compressed buffer")
	binary.LittleEndian.PutUint64(data[at:], 64<<30)
	return data
}

// A compressed buffer claiming far more than its bytes can make (64 GiB
// out of a few hundred bytes) is an error, not an allocation: in a file, a
// stream file and on standard input.
func TestCompressedClaimIsAnError(t *testing.T) {
	dir := t.TempDir()
	stream := compressedClaim(t, false)
	t.Logf("a stream of %d bytes", len(stream))
	for name, c := range map[string]struct {
		data  []byte
		stdin bool
		ext   string
	}{"file": {compressedClaim(t, true), false, ".arrow"}, "stream": {stream, false, ".arrows"}, "stdin": {stream, true, ""}} {
		t.Run(name, func(t *testing.T) {
			for _, mapped := range []bool{true, false} {
				withMmap(t, mapped, func(t *testing.T) {
					mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
					defer mem.AssertSize(t, 0)
					in := []string{"-"}
					opts := Options{Stdin: bytes.NewReader(c.data)}
					if !c.stdin {
						in[0] = filepath.Join(dir, name+c.ext)
						require.NoError(t, os.WriteFile(in[0], c.data, 0o644))
					}
					_, _, err := aggregatePaths(context.Background(), t, mem, in, nil, opts)
					require.Error(t, err)
					assert.Regexp(t, `declares (68719476736|\d+) bytes uncompressed`, err.Error())
				})
			}
		})
	}
}

// Corrupt and truncated IPC files, compressed or not, read in place with
// either reader, fail with an *Error naming the file, free everything they
// allocated, and never crash or hang.
func TestIPCFileCorruptInPlace(t *testing.T) {
	dir := t.TempDir()
	inputs := map[string][]byte{}
	sample, err := os.ReadFile(filepath.Join(testdata, "sample.arrow"))
	require.NoError(t, err)
	inputs["sample"] = sample
	for name, opts := range map[string][]ipc.Option{"plain": nil, "lz4": {ipc.WithLZ4()}, "zstd": {ipc.WithZstd()}} {
		p := filepath.Join(dir, name+".src")
		writeIPCRecords(t, p, true, []int{3000, 2000}, opts...)
		inputs[name], err = os.ReadFile(p)
		require.NoError(t, err)
	}
	for _, mapped := range []bool{true, false} {
		withMmap(t, mapped, func(t *testing.T) {
			for name, data := range inputs {
				failures := 0
				for what, d := range corruptions(data) {
					path := filepath.Join(dir, "in.arrow")
					require.NoError(t, os.WriteFile(path, d, 0o644))
					mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					_, _, err := aggregatePaths(ctx, t, mem, []string{path}, nil, Options{})
					require.NoError(t, ctx.Err(), "%s %s: hung", name, what)
					cancel()
					mem.AssertSize(t, 0)
					if err != nil {
						failures++
						var e *Error
						require.ErrorAs(t, err, &e, "%s %s: %v", name, what, err)
						assert.Equal(t, path, e.Path)
						assert.False(t, errors.Is(err, errNotInPlace))
					}
				}
				assert.Positive(t, failures, name)
			}
		})
	}
}

// The footer's blocks are checked against the file before anything is
// read: outside the file, overlapping, or of the wrong kind.
func TestIPCFooterBlocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.arrow")
	writeIPCRecords(t, path, true, []int{100, 100})
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	ft, err := readIPCFooter(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	require.Len(t, ft.blocks, 3) // a dictionary batch, two record batches
	dicts := 0
	for _, b := range ft.blocks {
		if b.dict {
			dicts++
		}
	}
	assert.Equal(t, 1, dicts)
	// The footer's record batch blocks: patch the first block's offset.
	footerLen := int64(binary.LittleEndian.Uint32(data[len(data)-10:]))
	start := int64(len(data)) - 10 - footerLen
	first := ft.blocks[0].offset
	var pat [8]byte
	binary.LittleEndian.PutUint64(pat[:], uint64(first))
	at := int64(bytes.Index(data[start:], pat[:]))
	require.Positive(t, at)
	for name, off := range map[string]int64{"past the footer": start + 8, "before the stream": 0, "huge": 1 << 62, "negative": -8} {
		d := bytes.Clone(data)
		binary.LittleEndian.PutUint64(d[start+at:], uint64(off))
		_, err := readIPCFooter(bytes.NewReader(d), int64(len(d)))
		assert.ErrorContains(t, err, "corrupt Arrow IPC file", name)
	}
	// A block pointing at a message of the other kind.
	d := bytes.Clone(data)
	binary.LittleEndian.PutUint64(d[start+at:], uint64(ft.blocks[2].offset))
	ft2, err := readIPCFooter(bytes.NewReader(d), int64(len(d)))
	if err == nil {
		var msgErr error
		for _, b := range ft2.blocks {
			if _, err := parseIPCMessage(d[b.offset:b.offset+b.meta+b.body], b, false); err != nil {
				msgErr = err
			}
		}
		assert.Error(t, msgErr)
	}
}

// Windows cut from a view fold to the states the backend makes of the whole
// view: the windows' state merged in order is the view's state.
func TestCopyViewMatchesView(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := ipcRecord(mem, 3, 1000, true)
	defer rec.Release()
	eng := newEngine(t, mem)
	for _, l := range arrow17.Leaves(rec.Schema()) {
		if !l.Supported() {
			continue
		}
		var c arrow17.Column
		require.NoError(t, arrow17.Extract(&c, rec, l, mem))
		for _, w := range [][2]int{{0, 1000}, {3, 997}, {9, 10}, {17, 512}} {
			v := c.View
			v.Offset += w[0]
			v.ValidityOffset += w[0]
			v.Len = w[1] - w[0]
			want := agg.New(l.Kind.Family(), orderedAggs)
			require.NoError(t, eng.UpdateView(context.Background(), &v, &want))
			cv := v
			buf := copyView(&cv, mem)
			got := agg.New(l.Kind.Family(), orderedAggs)
			require.NoError(t, eng.UpdateView(context.Background(), &cv, &got))
			buf.Release()
			assert.Equal(t, engine.Finalize(&want, l.Name, l.Type, orderedAggs), engine.Finalize(&got, l.Name, l.Type, orderedAggs), "%s %v", l.Name, w)
		}
		c.Release()
	}
}

// Streams with dictionary deltas (the stream path) give what the same
// batches give with whole dictionaries.
func TestIPCStreamDictionaryDeltas(t *testing.T) {
	dir := t.TempDir()
	sizes := []int{1000, 2000, 10, 3000}
	deltas, whole := filepath.Join(dir, "deltas.arrows"), filepath.Join(dir, "whole.arrows")
	writeIPCBatches(t, deltas, false, true, sizes, ipc.WithDictionaryDeltas(true))
	writeIPCBatches(t, whole, false, true, sizes)
	a, _ := os.ReadFile(deltas)
	b, _ := os.ReadFile(whole)
	require.NotEqual(t, a, b, "the deltas make another stream")
	want, err := aggregateIPCWith(t, whole, orderedAggs, 2, nil)
	require.NoError(t, err)
	got, err := aggregateIPCWith(t, deltas, orderedAggs, 2, nil)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}
