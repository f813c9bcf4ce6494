package agg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"
)

// The spill form of Groups: every group's fields, array after array, as
// they lie in memory (the machine's byte order), for the files a process
// writes and reads back itself when its groups outgrow memory. It is not
// a format that travels: MarshalBinary of the States is.

// spillFields are the arrays of g's spill form, in its order: pointers to
// g's fields, each written by AppendSpill and read by ReadSpill.
func (g *Groups) spillFields() []any {
	f := []any{&g.count, &g.nulls}
	if g.sum {
		f = append(f, &g.isum, &g.fsum, &g.fcomp, &g.fspec)
	}
	if g.ext {
		f = append(f, &g.min, &g.max, &g.bmin, &g.bmax)
	}
	if g.ord {
		f = append(f, &g.fnum, &g.firstRow, &g.lastRow, &g.minRow, &g.maxRow, &g.first, &g.last, &g.bfirst, &g.blast)
	}
	return f
}

// AppendSpill appends the spill form of every group of g to b.
func (g *Groups) AppendSpill(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(g.Len()))
	for _, f := range g.spillFields() {
		switch f := f.(type) {
		case *[]int64:
			b = appendRaw(b, *f)
		case *[]float64:
			b = appendRaw(b, *f)
		case *[]Int192:
			b = appendRaw(b, *f)
		case *[][2]uint64:
			b = appendRaw(b, *f)
		case *[]bool:
			b = appendRaw(b, *f)
		case *[][]byte:
			b = appendBytesList(b, *f)
		}
	}
	return b
}

// ReadSpill reads groups that AppendSpill wrote, of Groups of g's family
// and aggregates, from the start of b into g, which must have none, and
// returns the bytes after them. Bytes that are not such groups are an
// error.
func (g *Groups) ReadSpill(b []byte) ([]byte, error) {
	if g.Len() != 0 {
		return nil, errors.New("reading spilled groups into groups that have some")
	}
	g.Release() // (the room reserved, if any: the arrays read are new)
	u, k := binary.Uvarint(b)
	if k <= 0 || u > uint64(len(b)) {
		return nil, errors.New("spilled groups: a bad count")
	}
	b, n := b[k:], int(u)
	var err error
	for _, f := range g.spillFields() {
		switch f := f.(type) {
		case *[]int64:
			*f, b, err = readRaw[int64](b, n)
		case *[]float64:
			*f, b, err = readRaw[float64](b, n)
		case *[]Int192:
			*f, b, err = readRaw[Int192](b, n)
		case *[][2]uint64:
			*f, b, err = readRaw[[2]uint64](b, n)
		case *[]bool:
			*f, b, err = readRaw[bool](b, n)
		case *[][]byte:
			*f, b, err = readBytesList(b, n)
		}
		if err != nil {
			g.Release()
			return nil, fmt.Errorf("spilled groups: %w", err)
		}
	}
	return b, nil
}

// appendRaw appends s (one of the arrays of Groups: length-prefixed, or
// empty where the family keeps none) as it lies in memory.
func appendRaw[T any](b []byte, s []T) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	if len(s) == 0 {
		return b
	}
	var zero T
	return append(b, unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(zero)))...)
}

// readRaw reads an array appendRaw wrote, of n elements or none, into a
// new slice.
func readRaw[T any](b []byte, n int) ([]T, []byte, error) {
	b, some, err := readCount(b, n, "array")
	if err != nil || !some {
		return nil, b, err
	}
	var zero T
	size := n * int(unsafe.Sizeof(zero))
	if size > len(b) {
		return nil, nil, errors.New("truncated")
	}
	s := make([]T, n)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), size), b[:size])
	if bs, ok := any(s).([]bool); ok { // (a bool is one byte, 0 or 1)
		for i := range bs {
			if b[i] > 1 {
				return nil, nil, errors.New("a bad boolean")
			}
		}
	}
	return s, b[size:], nil
}

// readCount reads the count that starts an array or list (what) of the
// spill form: n elements, or 0 for none (some false); it returns the bytes
// after it.
func readCount(b []byte, n int, what string) (rest []byte, some bool, err error) {
	m, k := binary.Uvarint(b)
	if k <= 0 || (m != 0 && m != uint64(n)) {
		return nil, false, fmt.Errorf("a bad %s length", what)
	}
	return b[k:], m != 0, nil
}

// appendBytesList appends a list of byte strings, each length-prefixed
// (the length plus one; 0 for nil).
func appendBytesList(b []byte, s [][]byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	for _, x := range s {
		if x == nil {
			b = append(b, 0)
			continue
		}
		b = binary.AppendUvarint(b, uint64(len(x))+1)
		b = append(b, x...)
	}
	return b
}

// readBytesList reads a list appendBytesList wrote, of n strings or none.
func readBytesList(b []byte, n int) ([][]byte, []byte, error) {
	b, some, err := readCount(b, n, "list")
	if err != nil || !some {
		return nil, b, err
	}
	s := make([][]byte, n)
	for i := range s {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k)+1 {
			return nil, nil, errors.New("a bad string length")
		}
		b = b[k:]
		if l > 0 {
			s[i] = append([]byte{}, b[:l-1]...)
			b = b[l-1:]
		}
	}
	return s, b, nil
}
