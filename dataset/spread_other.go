//go:build !amd64

package dataset

// spreadAVX512 is false: no AVX-512 here.
var spreadAVX512 = false

// spreadWords is spreadValues' SIMD part, which other architectures do not
// have: it spreads nothing.
func spreadWords[T uint16 | uint32 | uint64](dense []T, valid []byte, m int, out []T) (words, took int) {
	return 0, 0
}
