package dataset

import (
	"errors"
	"fmt"
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
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
	m := &mappedFile{file: src.file, size: size}
	if m.file == nil {
		return m, nil
	}
	fi, err := m.file.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() != size {
		return nil, fmt.Errorf("the file changed while it was read: %d bytes, %d before", fi.Size(), size)
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

// unmap unmaps the file; nothing may use its bytes afterwards.
func (m *mappedFile) unmap() error {
	if m.mapped == nil {
		return nil
	}
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
