package column

import "golang.org/x/sys/unix"

// mappable: the arrays of an Arena may live in mappings of their own.
const mappable = true

// pageBytes is what a mapping's size is rounded up to.
var pageBytes = unix.Getpagesize()

// mapBytes maps n bytes of zeroed, private, anonymous memory.
func mapBytes(n int) ([]byte, error) {
	return unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
}

// remap extends mapping m to n bytes, moving it where it cannot grow in
// place: its pages move, its bytes are not copied.
func remap(m []byte, n int) ([]byte, error) {
	return unix.Mremap(m, n, unix.MREMAP_MAYMOVE)
}

// unmapBytes unmaps m.
func unmapBytes(m []byte) error { return unix.Munmap(m) }
