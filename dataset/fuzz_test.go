package dataset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/budget"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/planner"
	"github.com/arrowagg/arrowagg/report"
)

// The fuzz targets feed arbitrary bytes to format detection and to the
// readers, and aggregate every column of whatever they accept. Whatever the
// bytes, reading must not panic, hang, or leave an allocation outstanding,
// and must end in a result or in an error that names the input. The seed
// corpus (the testdata files and truncated copies of them) runs as a normal
// test; `make fuzz` runs each target for a set time.

// fuzzTimeout bounds the read of one fuzz input (up to a few hundred KiB,
// read in milliseconds, but a loaded machine runs several fuzzing workers per
// core): one that takes longer is a hang. With its grace it stays under the
// 10 s after which the fuzzing engine gives up on an input without saying
// why.
const fuzzTimeout = 6 * time.Second

// addSeeds adds the testdata file name and truncated copies of it to the
// corpus of f.
func addSeeds(f *testing.F, name string) {
	f.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", name))
	require.NoError(f, err)
	f.Add(data)
	for _, n := range []int{len(data) / 2, len(data) - 1, 64, 12, 8} {
		if n > 0 && n < len(data) {
			f.Add(data[:n:n])
		}
	}
}

// writeInput writes data to a file of the test's temporary directory.
func writeInput(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}

// fuzzAggregate opens src (standard input reads stdin), selects every
// column and aggregates it on the CPU, and checks the outcome: a summary,
// or an error naming the input; no allocation outstanding; done within
// fuzzTimeout.
func fuzzAggregate(t *testing.T, src Source, stdin []byte) (counts []int64, err error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	ctx, cancel := context.WithTimeout(context.Background(), fuzzTimeout)
	defer cancel()

	type outcome struct {
		sum *Summary
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		sum, err := func() (*Summary, error) {
			eng, err := engine.New(engine.WithDevice(engine.DeviceCPU), engine.WithAllocator(mem), engine.WithThreads(1))
			if err != nil {
				return nil, err
			}
			defer eng.Close()
			opts := Options{Mem: mem, Workers: 2}
			if stdin != nil {
				opts.Stdin = bytes.NewReader(stdin)
			}
			d, err := Open(ctx, []Source{src}, opts)
			if err != nil {
				return nil, err
			}
			defer d.Close()
			sel, err := d.Select(nil)
			if err != nil {
				return nil, err
			}
			return d.Aggregate(ctx, eng, sel, AggregateOptions{})
		}()
		done <- outcome{sum, err}
	}()

	var out outcome
	select {
	case out = <-done:
	case <-time.After(fuzzTimeout + 3*time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("reading %s did not end within %v of its deadline:\n%s", src.Name(), 3*time.Second, buf[:runtime.Stack(buf, true)])
	}
	require.NoError(t, ctx.Err(), "reading %s took longer than %v", src.Name(), fuzzTimeout)
	if out.err != nil {
		var e *Error
		if assert.True(t, errors.As(out.err, &e), "the error %q is not an *Error", out.err) {
			assert.Equal(t, src.Name(), e.Path, "the error %q does not name the input", out.err)
		}
		for _, w := range runtimeWords {
			assert.NotContains(t, out.err.Error(), w, "the error quotes Go's runtime")
		}
	} else {
		require.NotNil(t, out.sum)
		assert.Equal(t, 1, out.sum.Files)
		assert.GreaterOrEqual(t, out.sum.Rows, int64(0))
		assert.Len(t, out.sum.Results, len(out.sum.Plan))
		for _, r := range out.sum.Results {
			counts = append(counts, r.Count, r.NullCount)
		}
	}
	mem.AssertSize(t, 0)
	return counts, out.err
}

// FuzzDetect detects the format of arbitrary bytes: Detect on their ends,
// DetectFile on all of them and Expand on a file of them, which must agree;
// an input detected as a format is then aggregated.
func FuzzDetect(f *testing.F) {
	for _, name := range []string{"sample.parquet", "sample.arrow", "sample.arrows"} {
		addSeeds(f, name)
	}
	f.Add([]byte{})
	f.Add([]byte("PAR1"))
	f.Add([]byte("PAR1PAR1PAR1"))
	f.Add([]byte("ARROW1\x00\x00ARROW1"))
	f.Add([]byte("\xff\xff\xff\xff\x00\x00\x00\x00"))
	f.Add([]byte("\x10\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		start := time.Now()
		size := int64(len(data))
		head := data[:min(len(data), detectLen)]
		tail := data[len(data)-min(len(data), detectLen):]
		want, werr := Detect(head, tail, size)
		got, gerr := DetectFile(bytes.NewReader(data), size)
		if werr != nil {
			assert.Equal(t, Unknown, want)
			require.Error(t, gerr, "Detect failed (%v), DetectFile did not", werr)
		}
		if gerr != nil {
			assert.Equal(t, Unknown, got)
		} else {
			// DetectFile only confirms or rejects what Detect says.
			require.Equal(t, want, got)
		}

		path := writeInput(t, "input", data)
		srcs, err := Expand([]string{path})
		// Detection reads a few bytes and at most the schema message.
		require.Less(t, time.Since(start), fuzzTimeout, "detecting the format took too long")
		if gerr != nil {
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, path, e.Path)
			return
		}
		require.NoError(t, err)
		require.Equal(t, []Source{{Path: path, Format: got, Size: size}}, srcs)
		fuzzAggregate(t, srcs[0], nil)
	})
}

// FuzzParquet reads arbitrary bytes as a Parquet file, whatever their
// magic.
func FuzzParquet(f *testing.F) {
	addSeeds(f, "sample.parquet")
	f.Fuzz(func(t *testing.T, data []byte) {
		path := writeInput(t, "input.parquet", data)
		src := Source{Path: path, Format: Parquet, Size: int64(len(data))}
		counts, err := fuzzAggregate(t, src, nil)
		// Every data page a segment of its own (aggregateChunk): the same
		// counts, or an error too. (Which chunk's error a file of several
		// bad chunks reports depends on which fails first and cancels the
		// others; within a chunk, the first bad page's:
		// TestPagePathSegmentErrors.)
		was := segmentBytes
		segmentBytes = 1
		defer func() { segmentBytes = was }()
		paged, perr := fuzzAggregate(t, src, nil)
		assert.Equal(t, err == nil, perr == nil, "%s: in segments of a page: %v, then %v", path, err, perr)
		assert.Equal(t, counts, paged, "%s: in segments of a page", path)
	})
}

// FuzzIPCFile reads arbitrary bytes as an Arrow IPC file, whatever their
// magic.
// The file is read from its footer, in place (mapped, then again with
// positioned reads); the seeds add lz4- and zstd-compressed files of several
// batches, and cuts at every eighth of them.
func FuzzIPCFile(f *testing.F) {
	addSeeds(f, "sample.arrow")
	dir := f.TempDir()
	for name, opts := range map[string][]ipc.Option{"plain": nil, "lz4": {ipc.WithLZ4()}, "zstd": {ipc.WithZstd()}} {
		path := filepath.Join(dir, name+".arrow")
		writeIPCRecords(f, path, true, []int{300, 1, 200}, opts...)
		data, err := os.ReadFile(path)
		require.NoError(f, err)
		f.Add(data)
		for k := 1; k < 8; k++ {
			f.Add(data[: len(data)*k/8 : len(data)*k/8])
		}
	}
	f.Add(unionSeed(f, true))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := writeInput(t, "input.arrow", data)
		for _, mapped := range []bool{true, false} {
			useMmap = mapped
			fuzzAggregate(t, Source{Path: path, Format: IPCFile, Size: int64(len(data))}, nil)
		}
		useMmap = true
		fuzzIPCWork(t, Source{Path: path, Format: IPCFile, Size: int64(len(data))})
		// Grouped in place (ipcSlices), in slices of its default size and
		// of a few rows: the same groups, or an error too.
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		ctx, cancel := context.WithTimeout(context.Background(), fuzzTimeout)
		defer cancel()
		src := Source{Path: path, Format: IPCFile, Size: int64(len(data))}
		out, err := fuzzGroup(ctx, mem, src, nil)
		was := ipcSliceBytes
		ipcSliceBytes = 64
		defer func() { ipcSliceBytes = was }()
		sliced, serr := fuzzGroup(ctx, mem, src, nil)
		require.NoError(t, ctx.Err(), "grouping %s took longer than %v", path, fuzzTimeout)
		assert.Equal(t, err == nil, serr == nil, "%s: in slices of a few rows: %v, then %v", path, err, serr)
		assert.Equal(t, out, sliced, "%s: in slices of a few rows", path)
		assertFuzzError(t, path, err)
		mem.AssertSize(t, 0)
	})
}

// fuzzIPCWork sizes the IPC file src as --device auto does before reading
// it (ipcFileRun.ipcWork), without the recovery smallFile wraps it in: a
// panic is the fuzzer's to see.
func fuzzIPCWork(t *testing.T, src Source) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	eng, err := engine.New(engine.WithDevice(engine.DeviceCPU), engine.WithAllocator(mem), engine.WithThreads(1))
	require.NoError(t, err)
	defer eng.Close()
	data, err := openIPCData(src, mem)
	if err != nil {
		return
	}
	defer data.close() //nolint:errcheck
	start, err := ipcFooterStart(data.f, data.size)
	if err != nil || start < 0 {
		return
	}
	footer, err := readIPCFooter(data.f, data.size)
	if err != nil {
		return
	}
	r := &ipcFileRun{eng: eng, mem: trackingAllocator(mem), data: data}
	r.ipcWork(footer) //nolint:errcheck // (no panic, no read outside the file: what is checked)
}

// FuzzIPCStream reads arbitrary bytes as an Arrow IPC stream on standard
// input, and as a stream file (read in place).
func FuzzIPCStream(f *testing.F) {
	addSeeds(f, "sample.arrows")
	f.Add(unionSeed(f, false))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzAggregate(t, Source{Path: Stdin, Format: IPCStream, Size: -1}, data)
		file := Source{Path: writeInput(t, "input.arrows", data), Format: IPCStream, Size: int64(len(data))}
		fuzzAggregate(t, file, nil) // (mapped: its messages walked in place)
		fuzzStreamWork(t, file)
	})
}

// fuzzStreamWork sizes the IPC stream file src as --device auto does
// before reading it (streamBlocks, blockWork), without the recovery
// smallStream wraps them in: a panic, or a block past the file, is the
// fuzzer's to see.
func fuzzStreamWork(t *testing.T, src Source) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	data, err := openIPCData(src, mem)
	if err != nil {
		return
	}
	defer data.close() //nolint:errcheck
	if data.mapped == nil {
		return
	}
	w := planner.PageWork{Threads: 1}
	streamBlocks(data.mapped, func(b ipcBlock) bool {
		require.LessOrEqual(t, b.offset+b.meta+b.body, int64(len(data.mapped)))
		blockWork(&w, data, b, mem)
		return true
	})
}

// unionSeed is an IPC file (or stream) of a sparse and a dense union column
// in two batches: the path of their type codes, offsets and children.
func unionSeed(f *testing.F, file bool) []byte {
	path := filepath.Join(f.TempDir(), "unions.arrow")
	writeOpaqueIPC(f, path, file, unionColumns(), 20, 10)
	data, err := os.ReadFile(path)
	require.NoError(f, err)
	return data
}

// FuzzParquetGroup groups arbitrary bytes read as a Parquet file by their
// string, binary and dictionary columns (the grouped route's own readers:
// the page path's rows, a key's dictionary page and indices), or by their
// first column when they have none, every other column aggregated, the
// rows filtered by their first integer column (its column indexes read:
// pageindex.go).
func FuzzParquetGroup(f *testing.F) {
	addSeeds(f, "sample.parquet")
	_, indexed := pageIndexFile(f, rand.New(rand.NewPCG(5, 5)), 600, 200, 256, false, nil)
	data, err := os.ReadFile(indexed)
	require.NoError(f, err)
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := writeInput(t, "input.parquet", data)
		src := Source{Path: path, Format: Parquet, Size: int64(len(data))}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		ctx, cancel := context.WithTimeout(context.Background(), fuzzTimeout)
		defer cancel()
		group := func(b *budget.Budget) (string, error) { return fuzzGroup(ctx, mem, src, b) }
		out, err := group(nil)
		// Row groups read a few rows at a time, in windows and in parts
		// (groupCost): the same groups, or the same error.
		was := minGroupWindow
		minGroupWindow = 7
		defer func() { minGroupWindow = was }()
		windowed, werr := group(budget.New(200<<20, "the fuzz test's budget"))
		var refused *budget.Error // (the smaller budget's own refusals)
		if (err == nil || werr == nil) && !errors.As(werr, &refused) {
			assert.Equal(t, fmt.Sprint(err), fmt.Sprint(werr), "%s: in windows", path)
			assert.Equal(t, out, windowed, "%s: in windows", path)
		}
		require.NoError(t, ctx.Err(), "grouping %s took longer than %v", path, fuzzTimeout)
		assertFuzzError(t, path, err)
		mem.AssertSize(t, 0)
	})
}

// fuzzGroup groups src, read with budget b (nil: the default), by its
// string and binary columns (or its first column when it has none), every
// other column aggregated, the rows filtered by its first integer column;
// its groups written out in JSON.
func fuzzGroup(ctx context.Context, mem memory.Allocator, src Source, b *budget.Budget) (string, error) {
	eng, err := engine.New(engine.WithDevice(engine.DeviceCPU), engine.WithAllocator(mem), engine.WithThreads(2))
	if err != nil {
		return "", err
	}
	defer eng.Close()
	d, err := Open(ctx, []Source{src}, Options{Mem: mem, Workers: 2, Budget: b})
	if err != nil {
		return "", err
	}
	defer d.Close()
	var keys []string
	for _, l := range d.Leaves(0) {
		if l.Repeated == 0 && (l.Kind == column.Binary || l.Kind == column.LargeBinary) && len(keys) < 2 {
			keys = append(keys, l.Name)
		}
	}
	if len(keys) == 0 && len(d.Leaves(0)) > 0 && d.Leaves(0)[0].Repeated == 0 {
		keys = []string{d.Leaves(0)[0].Name}
	}
	var where engine.RowFilter
	for _, l := range d.Leaves(0) {
		if l.Repeated == 0 && l.Kind.Family() == column.FamilySigned && where == nil {
			where, _ = engine.Where(fmt.Sprintf("%s > 3 or %s is null", l.Name, l.Name)) // (nil: a name the grammar does not take)
		}
	}
	sum, err := d.Group(ctx, eng, engine.GroupRequest{Keys: keys, Aggs: agg.Default, CountRows: true, Filter: where})
	if err != nil {
		return "", err
	}
	defer sum.Groups.Release()
	var out bytes.Buffer
	err = report.WriteGroups(&out, report.JSON, report.Groups{Rows: sum.Rows, Files: sum.Files, Kept: sum.Kept, Record: sum.Groups})
	return out.String(), err
}

// assertFuzzError checks that err, when not nil, is an *Error naming the
// input at path, and quotes nothing of Go's runtime.
func assertFuzzError(t *testing.T, path string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var e *Error
	if assert.True(t, errors.As(err, &e), "the error %q is not an *Error", err) {
		assert.Equal(t, path, e.Path, "the error %q does not name the input", err)
	}
	for _, w := range runtimeWords {
		assert.NotContains(t, err.Error(), w, "the error quotes Go's runtime")
	}
}
