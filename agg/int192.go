package agg

import (
	"math/big"
	"math/bits"
)

// Int192 is a 192-bit two's-complement integer, little-endian words. It holds
// every exact integer sum the engine accumulates: 2^63 values of 128 bits each
// (decimal128) need at most 191 bits.
type Int192 [3]uint64

// Int192From returns x as an Int192.
func Int192From(x int64) Int192 {
	s := uint64(x >> 63)
	return Int192{uint64(x), s, s}
}

// Int192FromUint returns x as an Int192.
func Int192FromUint(x uint64) Int192 { return Int192{x, 0, 0} }

// Int192From128 returns the 128-bit two's-complement value hi:lo as an Int192.
func Int192From128(lo uint64, hi int64) Int192 {
	return Int192{lo, uint64(hi), uint64(hi >> 63)}
}

// Add returns a + b (wrapping at 192 bits, which exact sums never reach).
func (a Int192) Add(b Int192) Int192 {
	var c uint64
	var r Int192
	r[0], c = bits.Add64(a[0], b[0], 0)
	r[1], c = bits.Add64(a[1], b[1], c)
	r[2], _ = bits.Add64(a[2], b[2], c)
	return r
}

// IsNeg reports whether a < 0.
func (a Int192) IsNeg() bool { return int64(a[2]) < 0 }

// IsZero reports whether a == 0.
func (a Int192) IsZero() bool { return a[0]|a[1]|a[2] == 0 }

// FitsInt64 reports whether a is in the int64 range.
func (a Int192) FitsInt64() bool {
	s := uint64(int64(a[0]) >> 63)
	return a[1] == s && a[2] == s
}

// FitsUint64 reports whether a is in the uint64 range.
func (a Int192) FitsUint64() bool { return a[1] == 0 && a[2] == 0 }

// Big returns a as a big.Int.
func (a Int192) Big() *big.Int {
	neg := a.IsNeg()
	m := a
	if neg {
		m = Int192{^a[0], ^a[1], ^a[2]}.Add(Int192{1, 0, 0})
	}
	words := []big.Word{big.Word(m[0]), big.Word(m[1]), big.Word(m[2])}
	if bits.UintSize == 32 {
		words = []big.Word{big.Word(uint32(m[0])), big.Word(m[0] >> 32), big.Word(uint32(m[1])), big.Word(m[1] >> 32), big.Word(uint32(m[2])), big.Word(m[2] >> 32)}
	}
	z := new(big.Int).SetBits(words)
	if neg {
		z.Neg(z)
	}
	return z
}

// String formats a in decimal.
func (a Int192) String() string { return a.Big().String() }
