package dataset

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/engine"
)

// setStreamSizes sets streamPageBytes and pieceBytes for the test.
func setStreamSizes(t testing.TB, page int64, piece int) {
	oldPage, oldPiece := streamPageBytes, pieceBytes
	streamPageBytes, pieceBytes = page, piece
	t.Cleanup(func() { streamPageBytes, pieceBytes = oldPage, oldPiece })
}

// codecInput is the compressed bytes of a test of the streams.
type codecInput struct {
	name string
	comp []byte
	unc  int // the size declared
}

// streamInputs are pages compressed with codec: random and zero bytes, in
// one frame (member) or several, declaring their size, or another;
// truncated, damaged, with bytes after them, or none.
func streamInputs(t *testing.T, codec compress.Compression) []codecInput {
	r := rand.New(rand.NewPCG(3, 4))
	random := make([]byte, 200_003)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	text := make([]byte, 150_001) // compressible, not runs
	for i := range text {
		text[i] = "abcdefgh"[r.IntN(8)]
	}
	zeros := make([]byte, 300_000)
	c, err := compress.GetCodec(codec)
	require.NoError(t, err)
	encode := func(b []byte) []byte { return c.Encode(nil, b) }
	var ins []codecInput
	add := func(name string, comp []byte, unc int) {
		ins = append(ins, codecInput{name: name, comp: comp, unc: unc})
	}
	for _, d := range []struct {
		name string
		b    []byte
	}{{"random", random}, {"text", text}, {"zeros", zeros}} {
		one := encode(d.b)
		add(d.name, one, len(d.b))
		// several frames (members), for the codecs that have them
		if codec != compress.Codecs.Brotli {
			third := len(d.b) / 3
			multi := append(append(encode(d.b[:third]), encode(d.b[third:2*third])...), encode(d.b[2*third:])...)
			add(d.name+"-frames", multi, len(d.b))
		}
		add(d.name+"-declared-less", one, len(d.b)-1)
		add(d.name+"-declared-more", one, len(d.b)+1)
		add(d.name+"-declared-half", one, len(d.b)/2)
		add(d.name+"-declared-none", one, 0)
		for _, cut := range []int{len(one) - 1, len(one) / 2, 5, 0} {
			add(fmt.Sprintf("%s-cut-%d", d.name, cut), one[:cut], len(d.b))
		}
		for _, at := range []int{len(one) - 3, len(one) / 2, len(one) / 5, 12} {
			bad := bytes.Clone(one)
			bad[at] ^= 0x5a
			add(fmt.Sprintf("%s-damaged-at-%d", d.name, at), bad, len(d.b))
		}
		add(d.name+"-garbage-after", append(bytes.Clone(one), "garbage"...), len(d.b))
		add(d.name+"-again-after", append(bytes.Clone(one), encode(d.b[:1000])...), len(d.b))
	}
	switch codec {
	case compress.Codecs.Zstd:
		// a stream's frames: a window, not a single segment, and a checksum
		var b bytes.Buffer
		w, err := zstd.NewWriter(&b, zstd.WithEncoderCRC(true), zstd.WithWindowSize(1<<16))
		require.NoError(t, err)
		_, err = w.Write(text)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		add("text-stream", b.Bytes(), len(text))
		bad := bytes.Clone(b.Bytes())
		bad[len(bad)-2] ^= 1 // the checksum
		add("text-stream-checksum", bad, len(text))
	case compress.Codecs.Gzip:
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		_, err := w.Write(text)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		bad := bytes.Clone(b.Bytes())
		bad[len(bad)-6] ^= 1 // the checksum
		add("text-checksum", bad, len(text))
	}
	return ins
}

// A page decompressed as a stream, a piece at a time (its compressed bytes
// in memory or read from a file), gives the bytes and the errors of the
// one-shot decode: on pages of random and zero bytes, of one frame or
// several, declaring the wrong size, truncated, damaged or followed by
// other bytes; with levels in front (a data page v2) or not.
func TestStreamMatchesOneShot(t *testing.T) {
	setStreamSizes(t, 0, 7919) // (pieces of a prime size: not a block's)
	ctx := context.Background()
	for _, codec := range []compress.Compression{compress.Codecs.Zstd, compress.Codecs.Gzip, compress.Codecs.Brotli} {
		c, err := compress.GetCodec(codec)
		require.NoError(t, err)
		var zd zstdDecoder
		var sd streamDecoders
		for _, in := range streamInputs(t, codec) {
			for _, levels := range []int{0, 5} {
				src := append(bytes.Repeat([]byte{7}, levels), in.comp...)
				t.Run(fmt.Sprintf("%s/%s/levels-%d", codec, in.name, levels), func(t *testing.T) {
					want := make([]byte, levels+in.unc)
					wantErr := decodePage(c, codec, &zd, want, src, levels)
					for _, fromFile := range []bool{false, true} {
						got := make([]byte, levels+in.unc)
						var r io.Reader = bytes.NewReader(src)
						if fromFile {
							r = sd.input(&guardChunk{f: bytes.NewReader(src)}, 0, int64(len(src)))
						}
						gotErr := sd.decodeInPieces(ctx, codec, got, r, levels, 0)
						if wantErr != nil {
							require.Error(t, gotErr, "from the file: %v; want %v", fromFile, wantErr)
							assert.Equal(t, wantErr.Error(), gotErr.Error(), "from the file: %v", fromFile)
							continue
						}
						require.NoError(t, gotErr, "from the file: %v", fromFile)
						assert.True(t, bytes.Equal(want, got), "from the file: %v: other bytes", fromFile)
					}
				})
			}
		}
		sd.release()
	}
}

// The zstd stream decoder decodes in the calling goroutine (it starts none):
// it reads its input there.
func TestZstdStreamIsSynchronous(t *testing.T) {
	setStreamSizes(t, 0, 1<<12)
	data := bytes.Repeat([]byte("arrowagg streams pages "), 1<<14)
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	require.NoError(t, err)
	src := &goroutineReaderAt{r: bytes.NewReader(c.Encode(nil, data)), ids: map[string]bool{}}
	var sd streamDecoders
	defer sd.release()
	out := make([]byte, len(data))
	require.NoError(t, sd.decodeInPieces(context.Background(), compress.Codecs.Zstd, out, sd.input(&guardChunk{f: src}, 0, src.r.Size()), 0, 0))
	assert.Equal(t, data, out)
	assert.Equal(t, map[string]bool{goroutineID(): true}, src.ids, "the goroutines that read the input")
}

// goroutineReaderAt records the goroutines that read it.
type goroutineReaderAt struct {
	r   *bytes.Reader
	mu  sync.Mutex
	ids map[string]bool
}

func (g *goroutineReaderAt) ReadAt(p []byte, off int64) (int, error) {
	g.mu.Lock()
	g.ids[goroutineID()] = true
	g.mu.Unlock()
	return g.r.ReadAt(p, off)
}

// streamCols are the columns of the tests of large pages: floats whose sums
// depend on how they are grouped, with nulls and without, integers, and a
// string column (read by pqarrow, its pages checked by the walk).
func streamCols() []pqCol {
	return []pqCol{
		genCol("f64", arrow.PrimitiveTypes.Float64, true, 0.3, true, func(r *rand.Rand) float64 { return r.NormFloat64() * 1e6 }),
		genCol("f64_required", arrow.PrimitiveTypes.Float64, false, 0, true, func(r *rand.Rand) float64 { return r.Float64() / 3 }),
		genCol("f32", arrow.PrimitiveTypes.Float32, true, 0.1, true, func(r *rand.Rand) float32 { return float32(r.NormFloat64()) }),
		genCol("i64", arrow.PrimitiveTypes.Int64, true, 0.2, true, func(r *rand.Rand) int64 { return int64(r.Uint64()) }),
		genCol("i32_required", arrow.PrimitiveTypes.Int32, false, 0, true, func(r *rand.Rand) int32 { return int32(r.Uint32()) }),
		genCol("i64_all_null", arrow.PrimitiveTypes.Int64, true, 1, true, func(r *rand.Rand) int64 { return 1 }),
		genCol("word", arrow.BinaryTypes.String, true, 0.1, false, func(r *rand.Rand) string { return fmt.Sprint(r.IntN(70000)) }),
	}
}

// raceSkips reports whether the runs under the race detector leave out
// case i of a large combinatorial test: every other case (the first kept);
// none without it.
func raceSkips(i int) bool { return raceEnabled && i%2 == 1 }

// raceSubset is xs less the cases raceSkips leaves out.
func raceSubset[T any](xs []T) []T {
	var out []T
	for i, x := range xs {
		if !raceSkips(i) {
			out = append(out, x)
		}
	}
	return out
}

// streamConfigs write each column chunk as one page (a dictionary page,
// then one data page, when dictionary-encoded).
func streamConfigs() []pqConfig {
	one := func(codec compress.Compression, v parquet.DataPageVersion, dict bool) []parquet.WriterProperty {
		return []parquet.WriterProperty{parquet.WithCompression(codec), parquet.WithDataPageVersion(v), parquet.WithDictionaryDefault(dict),
			parquet.WithDataPageSize(256 << 20), parquet.WithDictionaryPageSizeLimit(256 << 20), parquet.WithMaxRowGroupLength(1 << 24),
			parquet.WithStats(false)}
	}
	return []pqConfig{
		{name: "v1-zstd", props: one(compress.Codecs.Zstd, parquet.DataPageV1, false)},
		{name: "v2-zstd", props: one(compress.Codecs.Zstd, parquet.DataPageV2, false)},
		{name: "v1-gzip", props: one(compress.Codecs.Gzip, parquet.DataPageV1, false)},
		{name: "v2-gzip", props: one(compress.Codecs.Gzip, parquet.DataPageV2, false)},
		{name: "v1-brotli", props: one(compress.Codecs.Brotli, parquet.DataPageV1, false)},
		{name: "v1-uncompressed", props: one(compress.Codecs.Uncompressed, parquet.DataPageV1, false)},
		{name: "v2-uncompressed", props: one(compress.Codecs.Uncompressed, parquet.DataPageV2, false)},
		{name: "v1-snappy", props: one(compress.Codecs.Snappy, parquet.DataPageV1, false)}, // (no stream: whole)
		{name: "v1-zstd-dict", props: one(compress.Codecs.Zstd, parquet.DataPageV1, true)},
		{name: "v2-gzip-dict", props: one(compress.Codecs.Gzip, parquet.DataPageV2, true)},
	}
}

// Large pages read as streams (PLAIN pages a window at a time, the others
// whole, a piece at a time) give the results of the pages decompressed in
// one call, to the last bit: the windows of values are the same, whatever
// the codec, the page version, and the nulls.
func TestPagePathStreamsMatchWholePages(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := pqRecord(mem, streamCols(), 3*pageWindow+1234, 11)
	defer rec.Release()
	dir := t.TempDir()
	for _, cfg := range raceSubset(streamConfigs()) {
		t.Run(cfg.name, func(t *testing.T) {
			path := filepath.Join(dir, cfg.name+".parquet")
			writePQ(t, path, rec, cfg)
			for _, aggs := range []agg.Set{agg.Default, agg.Default | agg.Ordered} {
				setStreamSizes(t, 1<<62, 4<<20)
				want, _ := aggregateFile(t, mem, []string{path}, Options{Workers: 2}, aggs)
				setStreamSizes(t, 64<<10, 4099)
				got, sum := aggregateFile(t, mem, []string{path}, Options{Workers: 2}, aggs)
				assert.Equal(t, want, got, "aggregates %v", aggs)
				for i, p := range sum.Plan[:6] {
					assert.Equal(t, pageReason, p.Reason, "column %d", i)
				}
			}
		})
	}
}

// firstChunk is the column chunk of Parquet leaf col in the first row group
// of the file at path, as the page path reads it, its bytes read through
// wrap (when set), and the leaf, read as dt.
func firstChunk(t *testing.T, path string, col int, dt arrow.DataType, wrap func(io.ReaderAt) io.ReaderAt) (guardChunk, pageLeaf, int64) {
	t.Helper()
	_, pqf, err := probeParquet(pathSource(t, path))
	require.NoError(t, err)
	f, err := os.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	fi, err := f.Stat()
	require.NoError(t, err)
	var ra io.ReaderAt = f
	if wrap != nil {
		ra = wrap(f)
	}
	cc, err := pqf.meta.RowGroup(0).ColumnChunk(col)
	require.NoError(t, err)
	r := &parquetRun{pqf: pqf, decodeBytes: DefaultDecodeBytes}
	c, ok, err := r.guardChunkOf(ra, fi.Size(), cc, col, false)
	require.NoError(t, err)
	require.True(t, ok)
	l, err := pageLeafOf(pqf.meta, col, dt)
	require.NoError(t, err)
	return c, l, pqf.meta.RowGroup(0).NumRows()
}

// cancellingReaderAt cancels a context once more than at bytes were read
// from it, and notes then how many bytes the streams had decompressed.
type cancellingReaderAt struct {
	r        io.ReaderAt
	at, read int64
	cancel   context.CancelFunc
	streamed func() int64
	// atCancel: the bytes decompressed at the cancel; -1 before it.
	atCancel int64
}

func (c *cancellingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.read += int64(len(p))
	if c.read > c.at && c.atCancel < 0 {
		c.atCancel = c.streamed()
		c.cancel()
	}
	return c.r.ReadAt(p, off)
}

// stopCtx notes how many bytes the streams had decompressed when its error
// was first asked for after it was done: the streams ask for it before
// each piece.
type stopCtx struct {
	context.Context
	streamed func() (done, left int64)
	atStop   int64 // -1 before
	leftThen int64 // the bytes the page had left then
}

func (c *stopCtx) Err() error {
	err := c.Context.Err()
	if err != nil && c.atStop < 0 {
		c.atStop, c.leftThen = c.streamed()
	}
	return err
}

// A cancel that comes while a large page decompresses stops the page path
// within the piece being decompressed then: at most pieceBytes more come
// out of the stream after the cancel (counted, not timed). A PLAIN page is
// never held whole: the worker holds a window of its values.
func TestStreamCancelStopsWithinAPiece(t *testing.T) {
	const piece = 64 << 10
	setStreamSizes(t, 1<<20, piece)
	eng, err := engine.New(engine.WithDevice(engine.DeviceCPU), engine.WithThreads(1))
	require.NoError(t, err)
	defer eng.Close()
	mem := memory.DefaultAllocator
	// 2^20 rows: pages of about 8 MiB that compress little.
	cols := []pqCol{
		genCol("x", arrow.PrimitiveTypes.Float64, true, 0.1, true, func(r *rand.Rand) float64 { return r.Float64() }),
		genCol("y", arrow.PrimitiveTypes.Float64, false, 0, true, func(r *rand.Rand) float64 { return r.NormFloat64() }),
	}
	rec := pqRecord(mem, cols, 1<<20, 5)
	defer rec.Release()
	dir := t.TempDir()
	one := func(codec compress.Compression, v parquet.DataPageVersion, dict bool) pqConfig {
		return pqConfig{props: []parquet.WriterProperty{parquet.WithCompression(codec), parquet.WithDataPageVersion(v),
			parquet.WithDictionaryDefault(dict), parquet.WithDataPageSize(256 << 20), parquet.WithDictionaryPageSizeLimit(256 << 20),
			parquet.WithMaxRowGroupLength(1 << 24)}}
	}
	cases := []struct {
		name  string
		cfg   pqConfig
		plain bool
	}{
		{"v1-zstd", one(compress.Codecs.Zstd, parquet.DataPageV1, false), true},
		{"v2-zstd", one(compress.Codecs.Zstd, parquet.DataPageV2, false), true},
		{"v1-gzip", one(compress.Codecs.Gzip, parquet.DataPageV1, false), true},
		{"v2-brotli", one(compress.Codecs.Brotli, parquet.DataPageV2, false), true},
		{"v1-uncompressed", one(compress.Codecs.Uncompressed, parquet.DataPageV1, false), true},
		{"v1-zstd-dictionary", one(compress.Codecs.Zstd, parquet.DataPageV1, true), false}, // (the dictionary page, whole)
	}
	for _, tc := range raceSubset(cases) {
		path := filepath.Join(dir, tc.name+".parquet")
		writePQ(t, path, rec, tc.cfg)
		for col := range cols {
			t.Run(fmt.Sprintf("%s/%s", tc.name, cols[col].field.Name), func(t *testing.T) {
				var s pageScratch
				var g pageGuard
				streamed := func() (int64, int64) {
					return s.stream.done + g.streams.whole.done, s.stream.unc - s.stream.done + g.streams.whole.unc - g.streams.whole.done
				}

				// Uncancelled, the stream gives the whole page's results.
				c, l, rows := firstChunk(t, path, col, arrow.PrimitiveTypes.Float64, nil)
				want, err := (&pageScratch{}).aggregateChunk(context.Background(), eng, &pageGuard{}, &c, &l, rows, false)
				require.NoError(t, err)
				setStreamSizes(t, 1<<62, piece)
				whole, err := (&pageScratch{}).aggregateChunk(context.Background(), eng, &pageGuard{}, &c, &l, rows, false)
				setStreamSizes(t, 1<<20, piece)
				require.NoError(t, err)
				assert.Equal(t, whole.state, want.state)

				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var cr *cancellingReaderAt
				c, l, rows = firstChunk(t, path, col, arrow.PrimitiveTypes.Float64, func(r io.ReaderAt) io.ReaderAt {
					cr = &cancellingReaderAt{r: r, cancel: cancel, streamed: func() int64 { done, _ := streamed(); return done }, atCancel: -1}
					return cr
				})
				cr.at = (c.end - c.off) / 2
				sctx := &stopCtx{Context: ctx, streamed: streamed, atStop: -1}
				_, err = s.aggregateChunk(sctx, eng, &g, &c, &l, rows, false)
				require.ErrorIs(t, err, context.Canceled)
				require.GreaterOrEqual(t, cr.atCancel, int64(0), "cancelled")
				require.GreaterOrEqual(t, sctx.atStop, int64(0), "stopped")
				assert.Positive(t, cr.atCancel, "cancelled in the page")
				assert.LessOrEqual(t, sctx.atStop-cr.atCancel, int64(piece), "bytes decompressed after the cancel")
				assert.Positive(t, sctx.leftThen, "bytes of the page left at the stop")
				if tc.plain {
					assert.Zero(t, cap(s.page), "a buffer of the page")
					assert.LessOrEqual(t, cap(s.values), 8*pageWindow, "the buffer of values")
				}
			})
		}
	}
}

// Damaged large pages fail read as streams as they fail decompressed whole,
// with the same error (or give the same results): a stream's decompression
// error comes first, as the whole page's would, however far its values were
// folded.
func TestStreamedPageErrorsMatchWholePages(t *testing.T) {
	rec := pqRecord(memory.DefaultAllocator, streamCols(), pageWindow+1234, 12)
	defer rec.Release()
	dir := t.TempDir()
	for ci, cfg := range streamConfigs() {
		if raceSkips(ci) {
			continue
		}
		if cfg.name == "v1-snappy" {
			continue // (no stream)
		}
		t.Run(cfg.name, func(t *testing.T) {
			good := filepath.Join(dir, cfg.name+".parquet")
			writePQ(t, good, rec, cfg)
			data, err := os.ReadFile(good)
			require.NoError(t, err)
			r := rand.New(rand.NewPCG(uint64(ci), 5))
			failures := 0
			for k, cr := range chunkRanges(t, good)[:6] { // the page path's
				for trial := 0; trial < 4; trial++ {
					d := bytes.Clone(data)
					var off int64
					switch trial {
					case 0: // where the page's bytes begin (the levels, or the compressed stream's header)
						off = cr[0] + 30 + r.Int64N(20)
					default:
						off = cr[0] + r.Int64N(cr[1]-cr[0])
					}
					switch trial % 3 {
					case 0: // random bytes
						for i := off; i < min(off+8, cr[1]); i++ {
							d[i] = byte(r.Uint32())
						}
					case 1: // a run of 0xFF
						for i := off; i < min(off+5, cr[1]); i++ {
							d[i] = 0xFF
						}
					default: // one flipped bit
						d[off] ^= 1 << r.IntN(8)
					}
					path := filepath.Join(dir, fmt.Sprintf("bad-%d-%d-%d.parquet", ci, k, trial))
					require.NoError(t, os.WriteFile(path, d, 0o644))
					run := func(page int64) ([]string, error) {
						setStreamSizes(t, page, 4099)
						sum, _, err := aggregatePaths(context.Background(), t, memory.DefaultAllocator, []string{path}, nil, Options{Workers: 2})
						if err != nil {
							return nil, err
						}
						out := make([]string, len(sum.Results))
						for i, r := range sum.Results {
							out[i] = render(r)
						}
						return out, nil
					}
					want, wantErr := run(1 << 62)
					got, gotErr := run(64 << 10)
					if wantErr != nil {
						failures++
						require.Error(t, gotErr, "%s at %d: want %v", path, off, wantErr)
						assert.Equal(t, wantErr.Error(), gotErr.Error(), "%s at %d", path, off)
					} else {
						require.NoError(t, gotErr, "%s at %d", path, off)
						assert.Equal(t, want, got, "%s at %d", path, off)
					}
					os.Remove(path)
				}
			}
			assert.Positive(t, failures)
		})
	}
}

// zstdRunsFrame is a zstd frame that does not declare its size, of blocks
// blocks of 128 KiB of one byte each (4 bytes a block).
func zstdRunsFrame(blocks int) []byte {
	src := binary.LittleEndian.AppendUint32(nil, 0xfd2fb528)
	src = append(src, 0x00, 0x68) // no content size, not a single segment; a window of 8 MiB
	for i := range blocks {
		v := uint32(1<<1 | (128<<10)<<3) // one byte repeated
		if i == blocks-1 {
			v |= 1 // the last block
		}
		src = append(src, byte(v), byte(v>>8), byte(v>>16), 7)
	}
	return src
}

// A zstd page whose frames do not declare their size and decode to far more
// than the page says it holds (16 KB of blocks, 512 MiB of bytes, in a page
// of 1 MiB; the walk bounds only the sizes frames declare) is an error,
// decompressed whole or as a stream, before its bytes are all decoded or
// held: the decoders stop a block past the page.
func TestZstdPageDecodingPastItsSize(t *testing.T) {
	src := zstdRunsFrame(4096)
	const unc = 1 << 20
	const want = "a page said to hold 1048576 bytes decompresses to more"
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	require.NoError(t, err)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err = decodePage(c, compress.Codecs.Zstd, &zstdDecoder{}, make([]byte, unc), src, 0)
	runtime.ReadMemStats(&after)
	require.EqualError(t, err, want)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "bytes allocated")

	setStreamSizes(t, 0, 1<<20)
	var sd streamDecoders
	defer sd.release()
	runtime.ReadMemStats(&before)
	err = sd.decodeInPieces(context.Background(), compress.Codecs.Zstd, make([]byte, unc), bytes.NewReader(src), 0, 8<<20)
	runtime.ReadMemStats(&after)
	require.EqualError(t, err, want)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "bytes allocated")

	// Through the page path: the page as a column chunk of int32 values.
	h := pageHeader{typ: pageTypeData, hasData: true, numValues: unc / 4, encoding: int32(parquet.Encodings.Plain),
		defEncoding: int32(parquet.Encodings.RLE), hasType: true, uncompressed: unc, hasUncompressed: true,
		compressed: int32(len(src)), hasCompressed: true}
	data := append(encodeHeader(h), src...)
	eng, err := engine.New(engine.WithDevice(engine.DeviceCPU), engine.WithThreads(1))
	require.NoError(t, err)
	defer eng.Close()
	for _, page := range []int64{1 << 62, 64 << 10} {
		setStreamSizes(t, page, 1<<20)
		gc := guardChunk{f: bytes.NewReader(data), end: int64(len(data)), values: unc / 4, codec: compress.Codecs.Zstd, phys: parquet.Types.Int32}
		l := pageLeaf{typ: arrow.PrimitiveTypes.Int32, kind: column.Int32}
		runtime.ReadMemStats(&before)
		_, err := (&pageScratch{}).aggregateChunk(context.Background(), eng, &pageGuard{}, &gc, &l, unc/4, false)
		runtime.ReadMemStats(&after)
		require.EqualError(t, err, "page 0: "+want, "pages streamed past %d bytes", page)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "bytes allocated, pages streamed past %d bytes", page)
	}
}

// blockingCodec decodes when it is released, after saying it started.
type blockingCodec struct {
	compress.Codec
	started, release chan struct{}
}

func (b blockingCodec) Decode(dst, src []byte) []byte {
	close(b.started)
	<-b.release
	for i := range dst {
		dst[i] = 7
	}
	return dst
}

// A large page of a codec without a stream (snappy, LZ4) decodes in a
// goroutine of its own: a cancel returns at once, the caller gives up the
// buffers the goroutine still writes; a page that is let finish is decoded.
func TestOneShotCancel(t *testing.T) {
	snappy, err := compress.GetCodec(compress.Codecs.Snappy)
	require.NoError(t, err)
	out := make([]byte, streamPageBytes+1)
	bc := blockingCodec{Codec: snappy, started: make(chan struct{}), release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-bc.started; cancel() }()
	abandoned := false
	var zd zstdDecoder
	err = decodeOneShot(ctx, bc, compress.Codecs.Snappy, &zd, out, []byte{1}, 0, func() { abandoned = true })
	assert.ErrorIs(t, err, context.Canceled)
	assert.True(t, abandoned, "the caller gives up its buffers")
	close(bc.release) // the goroutine finishes into the abandoned buffer

	bc = blockingCodec{Codec: snappy, started: make(chan struct{}), release: make(chan struct{})}
	close(bc.release)
	out = make([]byte, streamPageBytes+1)
	err = decodeOneShot(context.Background(), bc, compress.Codecs.Snappy, &zd, out, []byte{1}, 0, func() { t.Fatal("abandoned") })
	require.NoError(t, err)
	assert.Equal(t, byte(7), out[len(out)-1])
}
