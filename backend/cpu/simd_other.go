//go:build !amd64 || noasm

package cpu

import "github.com/arrowagg/arrowagg/agg"

// simdLevel is the instruction set the update loops use: the Go loops here.
var simdLevel = simdNone

// Without SIMD kernels the accumulators run their Go loops, which follow the
// same lane structure.

func kernelInt64([]int64, []byte, *intLanes) bool       { return false }
func kernelUint64([]uint64, []byte, *intLanes) bool     { return false }
func kernelInt32([]int32, []byte, *intLanes) bool       { return false }
func kernelUint32([]uint32, []byte, *intLanes) bool     { return false }
func kernelFloat64([]float64, []byte, *floatLanes) bool { return false }
func kernelFloat32([]float32, []byte, *floatLanes) bool { return false }

// kernelHashes: no kernel (see simd_amd64.go).
func kernelHashes[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64](vals []T, out []uint64) int {
	return 0
}

// kernelRaises: no kernel (see simd_amd64.go).
func kernelRaises[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64](vals []T, valid []byte, regs *[agg.SketchRegisters]uint8, floor uint8, out []uint64) (n, m int) {
	return 0, 0
}

// sketchFloor: 0, a bound of any registers (see simd_amd64.go).
func sketchFloor(*[agg.SketchRegisters]uint8) uint8 { return 0 }

// kernelIntSquares: no kernel (see simd_amd64.go).
func kernelIntSquares[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64](vals []T, valid []byte, out *intSqLanes) int {
	return 0
}

// kernelFloatSquares: no kernel (see simd_amd64.go).
func kernelFloatSquares[T float32 | float64](vals []T, valid []byte, out *floatSqLanes) int {
	return 0
}

// kernelSum: no kernel (see simd_amd64.go).
func kernelSum([]int64) (int64, int) { return 0, 0 }

// kernelZeros: no kernel (see simd_amd64.go).
func kernelZeros[U uint32 | uint64](b []U) (neg, pos bool, rest []U) { return false, false, b }
