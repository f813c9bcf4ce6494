package dataset

import (
	"errors"
	"fmt"
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/arrowagg/arrowagg/internal/startup"
)

// Files of the file system are read in place: mapped into memory, their
// pages (Parquet) and buffers (IPC) are read from the mapping, with no copy
// from the page cache into buffers of ours. The goroutines that touch a
// mapping run with debug.SetPanicOnFault, so that a file truncated while it
// is read makes a fault (a SIGBUS) that becomes errFileChanged in that
// goroutine (faultError), never a crash; the GPU backend, which reads host
// memory in goroutines of its own, gets copies. A file rewritten in place
// keeps its size but not its modification time: mappedFile.unchanged,
// called when the file is read, turns it into the same error.

// useMmap maps files into memory when true; false reads them with ReadAt
// (tests run both).
var useMmap = true

// errFileChanged is the error of a file that changed (was truncated or
// rewritten) while it was read.
var errFileChanged = errors.New("the file changed while it was read (truncated or rewritten)")

// mappedFile is the mapping of a file and what it was when it was mapped.
type mappedFile struct {
	mapped  []byte // the whole file; nil when it is not mapped
	file    *os.File
	size    int64
	modTime time.Time
}

// mapSource checks that the file of src (nil: a source that is not a file)
// still has size bytes and maps them, unless useMmap is off, the file is
// empty or too large for this platform, or the mapping fails (the file is
// then read with ReadAt, mapped left nil).
func mapSource(src *sourceBytes, size int64) (*mappedFile, error) {
	defer startup.Trace("file mapped", time.Now(), nil)
	m := &mappedFile{file: src.file, size: size}
	if m.file == nil {
		return m, nil
	}
	fi, err := m.file.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() != size {
		return nil, fmt.Errorf("%w: %d bytes, %d before", errFileChanged, fi.Size(), size)
	}
	m.modTime = fi.ModTime()
	if useMmap && size > 0 && int64(int(size)) == size {
		if b, err := unix.Mmap(int(m.file.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED); err == nil {
			_ = unix.Madvise(b, unix.MADV_SEQUENTIAL)
			_ = unix.Madvise(b, unix.MADV_WILLNEED)
			m.mapped = b
		}
	}
	return m, nil
}

// unchanged checks that the file still has the size and modification time
// it had when it was mapped: bytes rewritten while it was read would
// otherwise make a wrong answer. A source that is not a file passes (the
// program vouches for its bytes).
func (m *mappedFile) unchanged() error {
	if m.file == nil {
		return nil
	}
	fi, err := m.file.Stat()
	if err != nil {
		return err
	}
	if fi.Size() != m.size || !fi.ModTime().Equal(m.modTime) {
		return errFileChanged
	}
	return nil
}

// releaseMapped tells the kernel that bytes [off, off+n) of the mapped file
// mapped (nil: not mapped) are read: the page-table entries of the pages
// they cover whole are dropped (MADV_DONTNEED) now, by the worker that read
// them, rather than all at once by the unmap at the end of the read, on one
// thread after every worker is done (10 to 14 ms of a 1.2 GB Parquet file's
// 100 ms on 16 cores). The pages stay in
// the page cache and the bytes stay readable: a later read maps them again.
func releaseMapped(mapped []byte, off, n int64) {
	page := int64(os.Getpagesize())
	lo, hi := (off+page-1)&^(page-1), min(off+n, int64(len(mapped)))&^(page-1)
	if mapped == nil || off < 0 || lo >= hi {
		return
	}
	_ = unix.Madvise(mapped[lo:hi], unix.MADV_DONTNEED)
}

// unmap unmaps the file; nothing may use its bytes afterwards.
func (m *mappedFile) unmap() error {
	if m.mapped == nil {
		return nil
	}
	defer startup.Trace("file unmapped", time.Now(), nil)
	err := unix.Munmap(m.mapped)
	m.mapped = nil
	return err
}

// faultError is the error of a recovered panic p: a memory fault (in a
// mapped file: it was truncated) is errFileChanged.
func faultError(p any) error {
	if f, ok := p.(interface{ Addr() uintptr }); ok {
		return fmt.Errorf("%w: a memory fault at %#x reading the mapped file", errFileChanged, f.Addr())
	}
	return panicError(p)
}

// within reports whether b lies in the mapping m.
func within(b, m []byte) bool {
	if len(b) == 0 || len(m) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(unsafe.Pointer(unsafe.SliceData(m)))
	return p >= lo && p < lo+uintptr(len(m))
}

// populateMapped maps now, in the calling goroutine, the pages of the
// n bytes of mapped (nil: not mapped) at off that are in the page cache
// (MADV_POPULATE_READ, Linux 5.14 and later; a no-op before): the GPU page
// route's workers do it for the chunks they walk, so that the uploads that
// follow copy from mapped pages instead of faulting each one in on the
// staging's goroutines.
func populateMapped(mapped []byte, off, n int64) {
	page := int64(os.Getpagesize())
	lo, hi := off&^(page-1), min(off+n, int64(len(mapped)))
	if mapped == nil || off < 0 || lo >= hi {
		return
	}
	_ = unix.Madvise(mapped[lo:hi], unix.MADV_POPULATE_READ)
}
