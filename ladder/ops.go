//go:build cuda

package ladder

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
)

// op is an associative operator over int32 sequences: the device state it
// reduces to, and its host fold, the reference a device result is checked
// against.
type op interface {
	// label names the operator in the table.
	label() string
	// kernel12 is the operator's instantiation of kernel 12.
	kernel12() string
	// stateBytes is the size of its device state.
	stateBytes() int
	// reference folds data on the host, in order, and returns the check of
	// a device state against that fold.
	reference(data []int32) checker
}

// checker compares the bytes of a device state with a reference.
type checker func(got []byte) verdict

// verdict is the outcome of one check; got and want are set when it failed.
type verdict struct {
	ok        bool
	got, want string
}

// monoid is an associative operator with an identity, over states S that
// lift from int32; decode reads S from the bytes of kernel 12's state.
type monoid[S comparable] struct {
	name, kernel string
	size         int
	identity     S
	lift         func(int32) S
	combine      func(left, right S) S
	decode       func([]byte) S
}

func (m monoid[S]) label() string    { return m.name }
func (m monoid[S]) kernel12() string { return m.kernel }
func (m monoid[S]) stateBytes() int  { return m.size }

func (m monoid[S]) reference(data []int32) checker {
	want := m.fold(data)
	return func(b []byte) verdict {
		if len(b) < m.size {
			return verdict{got: fmt.Sprintf("%d bytes", len(b)), want: fmt.Sprint(want)}
		}
		got := m.decode(b)
		if got == want {
			return verdict{ok: true}
		}
		return verdict{got: fmt.Sprint(got), want: fmt.Sprint(want)}
	}
}

// fold is the sequential left fold of data, computed on contiguous chunks in
// parallel and combined in chunk order: the same value by associativity.
func (m monoid[S]) fold(data []int32) S {
	parts := max(1, min(runtime.GOMAXPROCS(0), len(data)>>16))
	res := make([]S, parts)
	var wg sync.WaitGroup
	for p := range parts {
		chunk := data[len(data)*p/parts : len(data)*(p+1)/parts]
		wg.Go(func() {
			s := m.identity
			for _, x := range chunk {
				s = m.combine(s, m.lift(x))
			}
			res[p] = s
		})
	}
	wg.Wait()
	s := m.identity
	for _, r := range res {
		s = m.combine(s, r)
	}
	return s
}

// sumOp is the int64 sum: the operator of every variant.
var sumOp = monoid[int64]{
	name:     "sum",
	kernel:   "ladder_v12_sum",
	size:     8,
	identity: 0,
	lift:     func(x int32) int64 { return int64(x) },
	combine:  func(l, r int64) int64 { return l + r },
	decode:   func(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) },
}

// mat2 is a 2x2 matrix {{a, b}, {c, d}} of integers mod 2^32 (Mat2 in
// kernels/ladder.cu).
type mat2 struct{ a, b, c, d uint32 }

func (m mat2) String() string { return fmt.Sprintf("[[%d %d] [%d %d]]", m.a, m.b, m.c, m.d) }

// mat2Op is the matrix product mod 2^32 of x lifted to {{x, 1}, {1, 0}}:
// associative, not commutative, so a fold that combines out of order is
// wrong with high probability.
var mat2Op = monoid[mat2]{
	name:     "2x2 matrix product mod 2^32",
	kernel:   "ladder_v12_mat2",
	size:     16,
	identity: mat2{1, 0, 0, 1},
	lift:     func(x int32) mat2 { return mat2{uint32(x), 1, 1, 0} },
	combine: func(l, r mat2) mat2 {
		return mat2{l.a*r.a + l.b*r.c, l.a*r.b + l.b*r.d, l.c*r.a + l.d*r.c, l.c*r.b + l.d*r.d}
	},
	decode: func(b []byte) mat2 {
		u := binary.LittleEndian.Uint32
		return mat2{u(b[0:]), u(b[4:]), u(b[8:]), u(b[12:])}
	},
}

// firstLast is the first and last value of a sequence and its length
// (FirstLast in kernels/ladder.cu); the empty sequence is the identity.
type firstLast struct {
	first, last int32
	count       uint64
}

func (f firstLast) String() string {
	return fmt.Sprintf("{first %d, last %d, count %d}", f.first, f.last, f.count)
}

// firstLastOp concatenates sequences, keeping only their ends and length.
var firstLastOp = monoid[firstLast]{
	name:     "first/last/count",
	kernel:   "ladder_v12_firstlast",
	size:     16,
	identity: firstLast{},
	lift:     func(x int32) firstLast { return firstLast{x, x, 1} },
	combine: func(l, r firstLast) firstLast {
		switch {
		case l.count == 0:
			return r
		case r.count == 0:
			return l
		}
		return firstLast{l.first, r.last, l.count + r.count}
	},
	decode: func(b []byte) firstLast {
		return firstLast{int32(binary.LittleEndian.Uint32(b[0:])), int32(binary.LittleEndian.Uint32(b[4:])),
			binary.LittleEndian.Uint64(b[8:])}
	},
}
