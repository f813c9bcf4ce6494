package dataset

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/metadata"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/arrowagg/arrowagg/budget"
	"github.com/arrowagg/arrowagg/column/arrow17"
)

// batchReader yields the record batches of one source.
type batchReader interface {
	// next returns the next batch, owned by the caller, or io.EOF.
	next(ctx context.Context) (arrow.Record, error)
	// abort unblocks a next that waits for input (standard input); it may be
	// called from any goroutine.
	abort()
	close() error
}

// progressFunc receives the number of input bytes newly done.
type progressFunc func(n int64)

// tracker reports the progress of one source of known size: done never goes
// past the size, and finish reports the rest.
type tracker struct {
	report progressFunc
	size   int64
	done   atomic.Int64
}

func (t *tracker) to(pos int64) {
	if t == nil || t.report == nil {
		return
	}
	pos = min(pos, t.size)
	for {
		cur := t.done.Load()
		if pos <= cur {
			return
		}
		if t.done.CompareAndSwap(cur, pos) {
			t.report(pos - cur)
			return
		}
	}
}

func (t *tracker) add(n int64) {
	if t != nil {
		t.to(t.done.Load() + n)
	}
}

// total is the bytes tracked (0 for nil).
func (t *tracker) total() int64 {
	if t == nil {
		return 0
	}
	return t.size
}

func (t *tracker) finish() {
	if t != nil {
		t.to(t.size)
	}
}

// --- Parquet ---------------------------------------------------------------

// parquetFile is what probing a Parquet file keeps: its metadata, so that the
// footer is read and decoded once, and how its columns map to Arrow.
type parquetFile struct {
	meta     *metadata.FileMetaData
	manifest *pqarrow.SchemaManifest
	// keys are the keys the file is read with (Options.Keys), crypt how it
	// is encrypted.
	keys  *Keys
	crypt fileCrypt
	// kms unwraps the keys of a file whose keys a key management service
	// wraps, with keys.KMS (kms.go); nil without master keys.
	kms *kmsRetriever
}

// fileCrypt is how a Parquet file is encrypted (encryption.go).
type fileCrypt struct {
	encrypted       bool // its footer or some of its column chunks
	encryptedFooter bool // "PARE" at its end
	aad             bool // its readers are given the keys' AAD prefix
}

// decryptProps returns the decryption properties of a new reader of the
// file; nil for a plaintext file read without keys.
func (pqf *parquetFile) decryptProps() *parquet.FileDecryptionProperties {
	if !pqf.crypt.encryptedFooter && pqf.keys.empty() {
		return nil
	}
	return pqf.keys.properties(!pqf.crypt.encryptedFooter, pqf.crypt.aad, pqf.kms)
}

func parquetReadProps(md *metadata.FileMetaData) *parquet.ReaderProperties {
	// Page buffers come from the Go allocator: the parquet reader pools and
	// finalizes them itself. Buffered streams read a column chunk about a
	// page at a time (1 MiB, or the largest column chunk of a smaller file;
	// more for larger pages), so that memory does not grow with the row
	// group size.
	props := parquet.NewReaderProperties(memory.DefaultAllocator)
	props.BufferedStreamEnabled = true
	props.BufferSize = 1 << 20
	if md != nil {
		var largest int64
		for rg := 0; rg < len(md.RowGroups); rg++ {
			for _, cc := range md.RowGroups[rg].Columns {
				if m := cc.GetMetaData(); m != nil {
					largest = max(largest, m.GetTotalCompressedSize())
				}
			}
		}
		props.BufferSize = min(props.BufferSize, max(largest, 4<<10))
	}
	return props
}

// probeParquet reads the footer and the Arrow schema of a Parquet file.
func probeParquet(s Source) (_ *arrow.Schema, _ *parquetFile, err error) {
	return probeParquetFixed(s, nil, nil, Int96Nanoseconds)
}

// probeParquetFixed is probeParquet, the footer being fix's when there is
// one (checkParquetFooter), an encrypted file read with keys, INT96
// timestamps in unit int96 (int96Schema).
func probeParquetFixed(s Source, fix *footerFix, keys *Keys, int96 Int96Unit) (_ *arrow.Schema, _ *parquetFile, err error) {
	defer recoverTo(&err)
	f, err := s.open()
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	pqf := &parquetFile{keys: keys}
	if keys != nil && len(keys.KMS) > 0 {
		pqf.kms = &kmsRetriever{master: keys.KMS, path: s.Path}
	}
	if s.Size >= 4 {
		var magic [4]byte
		if err := readFull(f, magic[:], s.Size-4); err != nil {
			return nil, nil, err
		}
		pqf.crypt.encryptedFooter = bytes.Equal(magic[:], parquetEncrypted)
	}
	pqf.crypt.aad = true
	var opts []file.ReadOption
	if fix != nil {
		md, err := metadata.NewFileMetaData(fix.footer, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("reading the Parquet footer: %w", err)
		}
		opts = append(opts, file.WithMetadata(md))
	}
	pf, err := pqf.openReader(f, nil, opts...)
	if err != nil && pqf.crypt.aad && strings.Contains(err.Error(), "AAD Prefix set in decryptionproperties but was not used") {
		pqf.crypt.aad = false // (a file encrypted without an AAD prefix)
		pf, err = pqf.openReader(f, nil, opts...)
	}
	if kerr := pqf.kms.failed(); err != nil && kerr != nil {
		err = kerr // (what unwrapping a key met: arrow-go saw no key)
	}
	var ke *KeyError
	if errors.As(err, &ke) && !ke.Wrong && pqf.kms == nil && pqf.crypt.encryptedFooter && managedKeys(f, s.Size) {
		return nil, nil, missingKey("its keys are wrapped by a key management service (its footer's key metadata is Parquet key material), and the master keys are missing: give them (--kms-key ID:KEY), or the data keys themselves (--footer-key, --column-key)")
	}
	if err != nil {
		return nil, nil, err
	}
	pqf.meta = pf.MetaData()
	pqf.crypt.encrypted = pqf.crypt.encryptedFooter || pqf.meta.IsSetEncryptionAlgorithm()
	if !pqf.crypt.encryptedFooter && pqf.meta.IsSetEncryptionAlgorithm() && keys != nil && len(keys.Footer) > 0 {
		if err := verifyPlaintextFooter(f, s.Size, pqf.meta, keys.Footer); err != nil {
			return nil, nil, err
		}
	}
	narrow, err := checkStoredSchema(pf.MetaData().KeyValueMetadata())
	if err != nil {
		return nil, nil, fmt.Errorf("reading the Arrow schema stored in the Parquet footer: %w", err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the Parquet schema: %w", err)
	}
	schema, err := fr.Schema()
	if err != nil {
		return nil, nil, fmt.Errorf("converting the Parquet schema to Arrow: %w", err)
	}
	pqf.manifest = fr.Manifest
	return int96Schema(narrowSchema(schema, narrow), pqf.meta, int96), pqf, nil
}

// openReader opens arrow-go's reader of the file f (decoding its footer,
// or taking it from opts), with the properties of parquetReadProps(md)
// and the decryption properties of a new reader. What arrow-go says (or
// panics with) of keys is a KeyError.
func (pqf *parquetFile) openReader(f parquet.ReaderAtSeeker, md *metadata.FileMetaData, opts ...file.ReadOption) (pf *file.Reader, err error) {
	dp := pqf.decryptProps()
	defer func() {
		if p := recover(); p != nil {
			if err = footerKeyError(p, pqf.keys, pqf.crypt.encryptedFooter); err == nil {
				err = panicError(p)
			}
		}
	}()
	props := parquetReadProps(md)
	props.FileDecryptProps = dp
	pf, err = file.NewParquetReader(f, append([]file.ReadOption{file.WithReadProps(props)}, opts...)...)
	if err != nil {
		if kerr := footerKeyError(err, pqf.keys, pqf.crypt.encryptedFooter); kerr != nil {
			return nil, kerr
		}
		return nil, fmt.Errorf("reading the Parquet footer: %w", err)
	}
	return pf, nil
}

// checkStoredSchema checks the Arrow schema a Parquet writer may store in
// the footer (an IPC schema message, base64-encoded, decoded as pqarrow
// does) through the IPC guard before pqarrow reads it. Its decimal32 and
// decimal64 fields, which pqarrow refuses, are rewritten in kv as
// decimal128 (widenStoredDecimals), and returned.
func checkStoredSchema(kv metadata.KeyValueMetadata) ([]narrowField, error) {
	serialized := kv.FindValue("ARROW:schema")
	if serialized == nil {
		return nil, nil
	}
	var decoded []byte
	var err error
	if len(*serialized)%4 == 0 {
		decoded, err = base64.StdEncoding.DecodeString(*serialized)
	}
	if len(decoded) == 0 || err != nil {
		if decoded, err = base64.RawStdEncoding.DecodeString(*serialized); err != nil {
			return nil, nil // pqarrow says what is wrong
		}
	}
	if err := checkStreamSchema(io.NewSectionReader(bytes.NewReader(decoded), 0, int64(len(decoded)))); err != nil {
		return nil, err
	}
	narrow, err := widenStoredDecimals(decoded)
	if err != nil || len(narrow) == 0 {
		return nil, err
	}
	// pqarrow reads the footer's metadata: the value, rewritten.
	if len(*serialized)%4 == 0 {
		*serialized = base64.StdEncoding.EncodeToString(decoded)
	} else {
		*serialized = base64.RawStdEncoding.EncodeToString(decoded)
	}
	return narrow, nil
}

// --- Arrow IPC file ----------------------------------------------------------

// The stream an IPC file holds (its schema message) gives the schema; the
// file is then read from its footer (ipcfile.go), or, for types the
// in-place decoder does not lay out, as that stream.

func probeIPCFile(ctx context.Context, src Source) (_ *arrow.Schema, err error) {
	f, err := src.open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sr, err := ipcFileStream(f, src.Size)
	if err != nil {
		return nil, err
	}
	s, err := openIPCStream(ctx, sr, nil, false, memory.DefaultAllocator, nil, nil, nil)
	if err != nil {
		return nil, asIPCFile(err)
	}
	defer s.close()
	return s.schema, nil
}

func openIPCFile(ctx context.Context, src Source, mem memory.Allocator, bud *budget.Budget, prog *tracker) (_ *ipcStreamReader, err error) {
	f, err := src.open()
	if err != nil {
		return nil, err
	}
	sr, err := ipcFileStream(f, src.Size)
	if err != nil {
		f.Close()
		return nil, err
	}
	s, err := openIPCStream(ctx, sr, f, false, mem, bud, prog, nil)
	if err != nil {
		return nil, asIPCFile(err)
	}
	s.file = true
	return s, nil
}

// asIPCFile words err, met reading the stream an IPC file holds, as the
// file's: its bytes are the file's, so a corrupt stream there is a corrupt
// file ("corrupt Arrow IPC file: message 3 of type 9"). errors.Is and
// errors.As see err.
func asIPCFile(err error) error {
	if err == nil || !strings.Contains(err.Error(), ipcStreamWords) {
		return err
	}
	return &ipcFileError{err}
}

// ipcStreamWords are the words the stream's errors name it by.
const ipcStreamWords = "Arrow IPC stream"

// ipcFileError is an error of the stream an IPC file holds, said of the
// file (asIPCFile).
type ipcFileError struct{ err error }

func (e *ipcFileError) Error() string {
	return strings.ReplaceAll(e.err.Error(), ipcStreamWords, "Arrow IPC file")
}
func (e *ipcFileError) Unwrap() error { return e.err }

// asIPCStream words err, met reading an IPC stream file in place with the
// file's decoder (aggregateIPCFile), as the stream's: "corrupt Arrow IPC
// stream: ...", as the stream reader says. errors.Is and errors.As see err.
func asIPCStream(err error) error {
	if err == nil || !strings.Contains(err.Error(), "Arrow IPC file") {
		return err
	}
	return &ipcStreamError{err}
}

// ipcStreamError is an error of the file decoder said of a stream
// (asIPCStream).
type ipcStreamError struct{ err error }

func (e *ipcStreamError) Error() string {
	return strings.ReplaceAll(e.err.Error(), "Arrow IPC file", ipcStreamWords)
}
func (e *ipcStreamError) Unwrap() error { return e.err }

// --- Arrow IPC stream -----------------------------------------------------

// maxRead is the most bytes one read of an IPC input asks for: the IPC
// reader reads a batch's body (any size) in one go, and a cancelled
// context stops it between two reads.
const maxRead = 4 << 20

// countingReader reads a stream for the IPC reader, at most maxRead bytes
// at a time, until ctx ends; it counts the bytes read for the progress bar.
type countingReader struct {
	ctx  context.Context
	r    io.Reader
	prog progressFunc
}

func (c *countingReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p[:min(len(p), maxRead)])
	if n > 0 && c.prog != nil {
		c.prog(int64(n))
	}
	return n, err
}

// errAborted ends the read of a stream that is no longer wanted.
var errAborted = errors.New("reading aborted")

// pump copies a reader that may block for ever (standard input) into a pipe
// from a goroutine of its own, so that closing the pipe unblocks whoever
// reads it. The goroutine ends at the next read of the source after that.
func pump(src io.Reader) (*io.PipeReader, func()) {
	pr, pw := io.Pipe()
	go func() {
		buf := make([]byte, 1<<20)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				if _, werr := pw.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr, func() { pr.CloseWithError(errAborted) }
}

type ipcStreamReader struct {
	rdr *ipc.Reader
	// schema is the stream's schema: rdr's, with the decimal32 and
	// decimal64 fields the guard rewrote retyped back (narrowSchema), which
	// next does to each record too.
	schema *arrow.Schema
	narrow bool
	alloc  *guardAllocator // rdr's
	closer io.Closer       // the file, if any
	stop   func()
	prog   *tracker
	batch  int  // record batches read
	file   bool // the stream an IPC file holds: its errors are said of the file (asIPCFile)
}

// openIPCStream starts reading a stream (reading its schema). r is a file or
// standard input; with stdin set, r is read through a pump so that abort, or
// the end of ctx, unblocks it.
// What the stream buffers and what Arrow's reader allocates is charged to
// bud (nil: nothing is charged) while the stream is open.
func openIPCStream(ctx context.Context, r io.Reader, closer io.Closer, stdin bool, mem memory.Allocator, bud *budget.Budget, prog *tracker, report progressFunc) (_ *ipcStreamReader, err error) {
	defer recoverTo(&err)
	s := &ipcStreamReader{closer: closer, prog: prog, stop: func() {}}
	size := streamSize(r)
	if stdin {
		size = -1
		pr, stop := pump(r)
		// Cancelling ctx unblocks a read of standard input at once.
		unregister := context.AfterFunc(ctx, stop)
		s.stop = func() {
			unregister()
			stop()
		}
		r = pr
	}
	if prog != nil {
		report = prog.add
	}
	guard := newIPCGuard(&countingReader{ctx: ctx, r: r, prog: report}, size)
	guard.charge = bud.Holder(ctx)
	s.alloc = guard.allocator(mem)
	rdr, err := newIPCReader(guard, s.alloc)
	if err != nil {
		if ofe := (*otherFormatError)(nil); errors.As(err, &ofe) {
			err = ofe // what the input is, not what Arrow's reader made of it
		}
		s.stop()
		s.alloc.freeAll()
		guard.charge.Close()
		if closer != nil {
			closer.Close()
		}
		return nil, err
	}
	s.rdr = rdr
	s.schema, s.narrow = narrowSchema(rdr.Schema(), guard.narrow), len(guard.narrow) > 0
	return s, nil
}

// streamSize is the size of the stream r, read from its start: that of a
// section of a file, or of a regular file; -1 when unknown.
func streamSize(r io.Reader) int64 {
	switch v := r.(type) {
	case *io.SectionReader:
		return v.Size()
	case *os.File:
		if fi, err := v.Stat(); err == nil && fi.Mode().IsRegular() {
			return fi.Size()
		}
	}
	return -1
}

// newIPCReader starts an IPC reader on r (reading its schema); a panic of
// the reader on corrupt bytes is an error.
func newIPCReader(r io.Reader, mem memory.Allocator) (_ *ipc.Reader, err error) {
	defer recoverTo(&err)
	rdr, err := ipc.NewReader(r, ipc.WithAllocator(mem))
	return rdr, runtimeFailure(err)
}

// next reads the next record batch; its errors name the batch (from 0).
func (s *ipcStreamReader) next(ctx context.Context) (rec arrow.Record, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = panicError(p)
		}
		if err != nil && !errors.Is(err, io.EOF) && ctx.Err() == nil {
			err = fmt.Errorf("record batch %d: %w", s.batch, err)
			if s.file {
				err = asIPCFile(err)
			}
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !s.rdr.Next() {
		if err := s.rdr.Err(); err != nil {
			return nil, runtimeFailure(err)
		}
		s.prog.finish()
		return nil, io.EOF
	}
	rec = s.rdr.Record()
	for i, col := range rec.Columns() {
		// Arrow's reader refuses a column shorter than the batch, not a
		// longer one, whose declared length (any, for a column that
		// needs no buffers of that size) the aggregation would walk.
		if err := checkColumnLength("stream", rec.ColumnName(i), int64(col.Len()), rec.NumRows()); err != nil {
			return nil, err
		}
		if err := checkArray(col); err != nil {
			return nil, fmt.Errorf("column %q: %w", rec.ColumnName(i), err)
		}
	}
	rec.Retain()
	if s.narrow {
		rec = narrowRecord(rec, s.schema)
	}
	s.batch++
	return rec, nil
}

// checkColumnLength says that a column of an IPC batch (of an Arrow IPC
// "file" or "stream") whose length is not the batch's is corrupt: both IPC
// routes check it.
func checkColumnLength(of, name string, n, rows int64) error {
	if n != rows {
		return fmt.Errorf("corrupt Arrow IPC %s: column %q has %d values in a batch of %d rows", of, name, n, rows)
	}
	return nil
}

// checkArray checks what Arrow's IPC reader leaves unchecked and the
// aggregation relies on: that validity bitmaps cover their arrays, here and
// in struct fields, union children and dictionaries, that the offsets of
// binary and string values run forward inside their data (Arrow checks only
// the last), and that every element of a union selects a child value that
// exists. It also builds the arrays Arrow makes on
// first use (the values of a dictionary), so that corrupt ones fail while the
// batch is read, as an error of the reader, and not half-way through its
// aggregation.
func checkArray(arr arrow.Array) error {
	d := arr.Data()
	if bufs := d.Buffers(); len(bufs) > 0 && (arr.NullN() > 0 || (bufs[0] != nil && bufs[0].Len() > 0)) {
		need := bitutil.BytesForBits(int64(d.Offset() + d.Len()))
		if bufs[0] == nil || int64(bufs[0].Len()) < need {
			have := 0
			if bufs[0] != nil {
				have = bufs[0].Len()
			}
			return fmt.Errorf("corrupt Arrow IPC stream: %d values at offset %d with a validity bitmap of %d bytes", d.Len(), d.Offset(), have)
		}
	}
	switch a := arr.(type) {
	case *array.String:
		return checkValueOffsets(arr, a.ValueOffsets)
	case *array.Binary:
		return checkValueOffsets(arr, a.ValueOffsets)
	case *array.LargeString:
		return checkValueOffsets(arr, a.ValueOffsets)
	case *array.LargeBinary:
		return checkValueOffsets(arr, a.ValueOffsets)
	case *array.Dictionary:
		return checkArray(a.Dictionary())
	case *array.Struct:
		for i := 0; i < a.NumField(); i++ {
			if err := checkArray(a.Field(i)); err != nil {
				return err
			}
		}
	case array.Union:
		// Its nulls are those of the child values its elements select.
		if err := arrow17.CheckUnion(a); err != nil {
			return fmt.Errorf("corrupt Arrow IPC stream: %w", err)
		}
		for i := 0; i < a.NumFields(); i++ {
			if err := checkArray(a.Field(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkValueOffsets checks the offsets of binary or string array arr
// (checkOffsets), which offsets reads; an empty array has none to check
// (writers may leave out even the first, and offsets would then panic).
func checkValueOffsets[T int32 | int64](arr arrow.Array, offsets func() []T) error {
	if arr.Len() == 0 {
		return nil
	}
	return checkOffsets(offsets(), dataBytes(arr), arr)
}

// dataBytes is the length of the data buffer of a binary or string array
// (not ValueBytes, which slices it by the offsets being checked).
func dataBytes(arr arrow.Array) int {
	if b := arr.Data().Buffers()[2]; b != nil {
		return b.Len()
	}
	return 0
}

// checkOffsets checks that the offsets of arr's values (of its elements:
// one more than they) are non-negative, never decrease and end inside its n
// bytes of data.
func checkOffsets[T int32 | int64](offsets []T, n int, arr arrow.Array) error {
	prev := T(0)
	for i, o := range offsets {
		switch {
		case o < prev && i == 0:
			return fmt.Errorf("corrupt Arrow IPC data: the first offset of %s values is negative (%d)", arr.DataType(), o)
		case o < prev:
			return fmt.Errorf("corrupt Arrow IPC data: offset %d of %s values (%d) is below the one before it (%d)", i, arr.DataType(), o, prev)
		case int64(o) > int64(n):
			return fmt.Errorf("corrupt Arrow IPC data: offset %d of %s values (%d) is past their %d bytes", i, arr.DataType(), o, n)
		}
		prev = o
	}
	return nil
}

func (s *ipcStreamReader) abort() { s.stop() }

// close releases the reader; the records it returned must have been
// released.
func (s *ipcStreamReader) close() error {
	s.stop()
	s.rdr.Release()
	s.alloc.freeAll()
	s.alloc.g.charge.Close()
	if s.closer != nil {
		return s.closer.Close()
	}
	return nil
}

// --- prefetching ------------------------------------------------------------

type batch struct {
	rec arrow.Record
	err error
}

// prefetcher decodes the next batch of a reader while the current one is
// aggregated.
type prefetcher struct {
	ch   chan batch
	quit chan struct{}
	wg   sync.WaitGroup
	r    batchReader
	once sync.Once
	ctx  context.Context
}

// stopGrace is how long stop waits, once the context is cancelled, for the
// goroutine to end: one in Arrow's reader decompressing a large buffer
// (whole, in Arrow's codec) is left to end on its own, and frees what it
// holds then.
const stopGrace = 50 * time.Millisecond

func startPrefetch(ctx context.Context, r batchReader) *prefetcher {
	p := &prefetcher{ch: make(chan batch, 1), quit: make(chan struct{}), r: r, ctx: ctx}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(p.ch)
		for {
			rec, err := r.next(ctx)
			if errors.Is(err, io.EOF) {
				return
			}
			select {
			case p.ch <- batch{rec, err}:
			case <-p.quit:
				if rec != nil {
					rec.Release()
				}
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return p
}

// stop ends the prefetching goroutine, releases what it decoded and not
// handed out, and closes the reader, so that every buffer is freed when it
// returns. The goroutine ends soon: a read of standard input is aborted, and
// one of a file (a regular file) reads at most maxRead bytes before it sees
// that the context ended.
//
// After a cancel, it returns within stopGrace: a goroutine still inside
// Arrow's reader (decompressing a buffer of up to the memory budget, whole)
// finishes on its own, then releases and closes everything.
func (p *prefetcher) stop() error {
	var err error
	p.once.Do(func() {
		close(p.quit)
		p.r.abort()
		done := make(chan error, 1)
		go func() {
			for b := range p.ch {
				if b.rec != nil {
					b.rec.Release()
				}
			}
			p.wg.Wait()
			done <- p.r.close()
		}()
		if p.ctx.Err() == nil {
			err = <-done
			return
		}
		select {
		case err = <-done:
		case <-time.After(stopGrace): // left to end on its own
		}
	})
	return err
}
