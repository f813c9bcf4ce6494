//go:build !noasm

package cpu

import (
	"unsafe"

	xcpu "golang.org/x/sys/cpu"

	"github.com/arrowagg/arrowagg/agg"
)

// simdLevel is the instruction set the update loops use: the best the CPU and
// the operating system support (tests lower it to compare the paths).
var simdLevel = detectSIMD()

func detectSIMD() simdKind {
	x := xcpu.X86
	switch {
	case x.HasAVX512F && x.HasAVX512DQ && x.HasAVX512BW && x.HasAVX512VL:
		return simdAVX512
	case x.HasAVX2:
		return simdAVX2
	}
	return simdNone
}

// The kernels fold n elements at vals into the lanes at out (read and written
// back). The float lanes are the canonical ones of floatLanes, over the four
// parts of q = morselQuarter(n) elements (the last one shorter or empty),
// which the AVX-512 kernels stream side by side and the AVX2 ones one after
// the other. valid is nil when every element is valid; otherwise bit b of byte
// i of valid is the validity of element 8i+b (bits past n are ignored). AVX2
// has kernels for int64 and float64 only.

//go:noescape
func int64AVX512(vals *int64, n, q int, valid *byte, out *intLanes)

//go:noescape
func uint64AVX512(vals *uint64, n, q int, valid *byte, out *intLanes)

//go:noescape
func int32AVX512(vals *int32, n, q int, valid *byte, out *intLanes)

//go:noescape
func uint32AVX512(vals *uint32, n, q int, valid *byte, out *intLanes)

//go:noescape
func float64AVX512(vals *float64, n, q int, valid *byte, out *floatLanes)

//go:noescape
func float32AVX512(vals *float32, n, q int, valid *byte, out *floatLanes)

//go:noescape
func int64AVX2(vals *int64, n, q int, valid *byte, out *intLanes)

//go:noescape
func float64AVX2(vals *float64, n, q int, valid *byte, out *floatLanes)

// The kernel wrappers run the kernel for the CPU's instruction set, if there
// is one, and report whether they did.

func kernelInt64(vals []int64, valid []byte, l *intLanes) bool {
	switch simdLevel {
	case simdAVX512:
		int64AVX512(unsafe.SliceData(vals), len(vals), morselQuarter(len(vals)), unsafe.SliceData(valid), l)
	case simdAVX2:
		int64AVX2(unsafe.SliceData(vals), len(vals), morselQuarter(len(vals)), unsafe.SliceData(valid), l)
	default:
		return false
	}
	return true
}

func kernelUint64(vals []uint64, valid []byte, l *intLanes) bool {
	if simdLevel < simdAVX512 {
		return false
	}
	uint64AVX512(unsafe.SliceData(vals), len(vals), morselQuarter(len(vals)), unsafe.SliceData(valid), l)
	return true
}

func kernelInt32(vals []int32, valid []byte, l *intLanes) bool {
	if simdLevel < simdAVX512 {
		return false
	}
	int32AVX512(unsafe.SliceData(vals), len(vals), morselQuarter(len(vals)), unsafe.SliceData(valid), l)
	return true
}

func kernelUint32(vals []uint32, valid []byte, l *intLanes) bool {
	if simdLevel < simdAVX512 {
		return false
	}
	uint32AVX512(unsafe.SliceData(vals), len(vals), morselQuarter(len(vals)), unsafe.SliceData(valid), l)
	return true
}

func kernelFloat64(vals []float64, valid []byte, l *floatLanes) bool {
	switch simdLevel {
	case simdAVX512:
		float64AVX512(unsafe.SliceData(vals), len(vals), morselQuarter(len(vals)), unsafe.SliceData(valid), l)
	case simdAVX2:
		float64AVX2(unsafe.SliceData(vals), len(vals), morselQuarter(len(vals)), unsafe.SliceData(valid), l)
	default:
		return false
	}
	return true
}

func kernelFloat32(vals []float32, valid []byte, l *floatLanes) bool {
	if simdLevel < simdAVX512 {
		return false
	}
	float32AVX512(unsafe.SliceData(vals), len(vals), morselQuarter(len(vals)), unsafe.SliceData(valid), l)
	return true
}

// The sketch hashes (agg.HashInt of each value widened to 64 bits,
// agg.HashFloat of floats) of n values, n a multiple of 8, into out.

//go:noescape
func hash64AVX512(vals *uint64, n int, out *uint64)

//go:noescape
func hashInt32AVX512(vals *int32, n int, out *uint64)

//go:noescape
func hashUint32AVX512(vals *uint32, n int, out *uint64)

//go:noescape
func hashFloat64AVX512(vals *float64, n int, out *uint64)

//go:noescape
func hashFloat32AVX512(vals *float32, n int, out *uint64)

// kernelHashes writes the sketch hashes of vals[:n] into out[:n], n the
// length of vals rounded down to a multiple of 8, and returns n; 0 where
// there is no kernel for T or the CPU has no AVX-512. Signed values hash
// sign-extended, unsigned ones zero-extended, floats as agg.HashFloat.
func kernelHashes[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64](vals []T, out []uint64) int {
	if simdLevel < simdAVX512 {
		return 0
	}
	n := min(len(vals), len(out)) &^ 7
	if n == 0 {
		return 0
	}
	var zero T
	switch any(zero).(type) {
	case int64, uint64:
		hash64AVX512((*uint64)(unsafe.Pointer(unsafe.SliceData(vals))), n, unsafe.SliceData(out))
	case int32:
		hashInt32AVX512((*int32)(unsafe.Pointer(unsafe.SliceData(vals))), n, unsafe.SliceData(out))
	case uint32:
		hashUint32AVX512((*uint32)(unsafe.Pointer(unsafe.SliceData(vals))), n, unsafe.SliceData(out))
	case float64:
		hashFloat64AVX512((*float64)(unsafe.Pointer(unsafe.SliceData(vals))), n, unsafe.SliceData(out))
	case float32:
		hashFloat32AVX512((*float32)(unsafe.Pointer(unsafe.SliceData(vals))), n, unsafe.SliceData(out))
	default:
		return 0
	}
	return n
}

// The sketch hashes of the valid values among n (a multiple of 8) at vals
// (valid nil: all of them) that may raise their register in regs (every
// register at least floor), into out (in order); returns their number.

//go:noescape
func raise64AVX512(vals *uint64, n int, valid *byte, regs *[agg.SketchRegisters]uint8, floor uint8, out *uint64) int

//go:noescape
func raiseInt32AVX512(vals *int32, n int, valid *byte, regs *[agg.SketchRegisters]uint8, floor uint8, out *uint64) int

//go:noescape
func raiseUint32AVX512(vals *uint32, n int, valid *byte, regs *[agg.SketchRegisters]uint8, floor uint8, out *uint64) int

//go:noescape
func raiseFloat64AVX512(vals *float64, n int, valid *byte, regs *[agg.SketchRegisters]uint8, floor uint8, out *uint64) int

//go:noescape
func raiseFloat32AVX512(vals *float32, n int, valid *byte, regs *[agg.SketchRegisters]uint8, floor uint8, out *uint64) int

// kernelRaises hashes the values vals[:n] (n: the length of vals rounded
// down to a multiple of 8, at most len(out)) whose bit in valid is set
// (bit i of valid: element i; nil: all of them) and writes to out, in
// order, those of their hashes that may raise their register in regs, all
// of whose registers are at least floor: every hash whose rank exceeds its
// register as regs is before the call, and perhaps a few more (a rank of
// 51 where the register is 51 already; a register raised by an earlier hash
// of the same call); returns n and the number written. n is 0 where there
// is no kernel for T or no AVX-512.
func kernelRaises[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64](vals []T, valid []byte, regs *[agg.SketchRegisters]uint8, floor uint8, out []uint64) (n, m int) {
	if simdLevel < simdAVX512 {
		return 0, 0
	}
	n = min(len(vals), len(out)) &^ 7
	if n == 0 {
		return 0, 0
	}
	p, vp, o := unsafe.Pointer(unsafe.SliceData(vals)), unsafe.SliceData(valid), unsafe.SliceData(out)
	var zero T
	switch any(zero).(type) {
	case int64, uint64:
		m = raise64AVX512((*uint64)(p), n, vp, regs, floor, o)
	case int32:
		m = raiseInt32AVX512((*int32)(p), n, vp, regs, floor, o)
	case uint32:
		m = raiseUint32AVX512((*uint32)(p), n, vp, regs, floor, o)
	case float64:
		m = raiseFloat64AVX512((*float64)(p), n, vp, regs, floor, o)
	case float32:
		m = raiseFloat32AVX512((*float32)(p), n, vp, regs, floor, o)
	default:
		return 0, 0
	}
	return n, m
}

// zeros64AVX512 and zeros32AVX512 tell which signed zeros the float bits
// of n values hold (n a multiple of 8, resp. 16): bit 0, -0; bit 1, +0.
//
//go:noescape
func zeros64AVX512(vals *uint64, n int) uint8

//go:noescape
func zeros32AVX512(vals *uint32, n int) uint8

// kernelZeros tells which signed zeros the float bits b hold (hasZeros),
// by the AVX-512 kernels for all but the last few, which it returns
// (rest) for the Go loop.
func kernelZeros[U uint32 | uint64](b []U) (neg, pos bool, rest []U) {
	if simdLevel < simdAVX512 || len(b) < 16 {
		return false, false, b
	}
	var z uint8
	n := len(b) &^ 15
	switch any(b).(type) {
	case []uint64:
		z = zeros64AVX512((*uint64)(unsafe.Pointer(&b[0])), n)
	case []uint32:
		z = zeros32AVX512((*uint32)(unsafe.Pointer(&b[0])), n)
	}
	return z&1 != 0, z&2 != 0, b[n:]
}

// minRegisterAVX512 is the smallest of the registers.
//
//go:noescape
func minRegisterAVX512(regs *[agg.SketchRegisters]uint8) uint8

// sketchFloor is a lower bound of every register of regs for kernelRaises:
// the smallest of them where the kernel runs, else 0.
func sketchFloor(regs *[agg.SketchRegisters]uint8) uint8 {
	if simdLevel < simdAVX512 {
		return 0
	}
	return minRegisterAVX512(regs)
}

// The sums of squares of n values (a multiple of 8), nulls (the clear bits
// of valid; nil: none) left out, into the lanes at out (read and written).

//go:noescape
func squaresInt64AVX512(vals *int64, n int, valid *byte, out *intSqLanes)

//go:noescape
func squaresUint64AVX512(vals *uint64, n int, valid *byte, out *intSqLanes)

//go:noescape
func squaresInt32AVX512(vals *int32, n int, valid *byte, out *intSqLanes)

//go:noescape
func squaresUint32AVX512(vals *uint32, n int, valid *byte, out *intSqLanes)

//go:noescape
func floatSquares64AVX512(vals *float64, n int, valid *byte, out *floatSqLanes)

//go:noescape
func floatSquares32AVX512(vals *float32, n int, valid *byte, out *floatSqLanes)

// kernelIntSquares folds the squares of vals[:n] (n: the length rounded
// down to a multiple of 8; valid: their validity from bit 0, nil for all
// valid) into out and returns n; 0 where there is no kernel.
func kernelIntSquares[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64](vals []T, valid []byte, out *intSqLanes) int {
	n := len(vals) &^ 7
	if simdLevel < simdAVX512 || n == 0 {
		return 0
	}
	p, vp := unsafe.Pointer(unsafe.SliceData(vals)), unsafe.SliceData(valid)
	var zero T
	switch any(zero).(type) {
	case int64:
		squaresInt64AVX512((*int64)(p), n, vp, out)
	case uint64:
		squaresUint64AVX512((*uint64)(p), n, vp, out)
	case int32:
		squaresInt32AVX512((*int32)(p), n, vp, out)
	case uint32:
		squaresUint32AVX512((*uint32)(p), n, vp, out)
	default:
		return 0
	}
	return n
}

// kernelFloatSquares is kernelIntSquares for floats: lane k of out takes
// elements 8j+k.
func kernelFloatSquares[T float32 | float64](vals []T, valid []byte, out *floatSqLanes) int {
	n := len(vals) &^ 7
	if simdLevel < simdAVX512 || n == 0 {
		return 0
	}
	p, vp := unsafe.Pointer(unsafe.SliceData(vals)), unsafe.SliceData(valid)
	var zero T
	switch any(zero).(type) {
	case float64:
		floatSquares64AVX512((*float64)(p), n, vp, out)
	case float32:
		floatSquares32AVX512((*float32)(p), n, vp, out)
	}
	return n
}

//go:noescape
func sumInt64AVX512(vals *int64, n int) int64

// kernelSum is the wrapping sum of vals[:k] and k, a multiple of 32 (0 where
// there is no kernel).
func kernelSum(vals []int64) (sum int64, k int) {
	if simdLevel < simdAVX512 {
		return 0, 0
	}
	k = len(vals) &^ 31
	return sumInt64AVX512(unsafe.SliceData(vals), k), k
}
