package agg

import (
	"math/big"
	"math/bits"
)

// Uint320 is a 320-bit unsigned integer, little-endian words: the exact sum
// of the squares of integer and decimal values. 2^63 squares of 64-bit
// integers need at most 191 bits, of decimal128 values 317.
type Uint320 [5]uint64

// Uint320From128 returns the 128-bit unsigned value hi:lo as a Uint320.
func Uint320From128(lo, hi uint64) Uint320 { return Uint320{lo, hi} }

// Add returns a + b (wrapping at 320 bits, which exact sums never reach).
func (a Uint320) Add(b Uint320) Uint320 {
	var c uint64
	for i := range a {
		a[i], c = bits.Add64(a[i], b[i], c)
	}
	return a
}

// Square is x² of the signed 64-bit x, as a Uint320.
func Square(x int64) Uint320 {
	m := uint64(x)
	if x < 0 {
		m = -m
	}
	hi, lo := bits.Mul64(m, m)
	return Uint320{lo, hi}
}

// SquareUnsigned is x² as a Uint320.
func SquareUnsigned(x uint64) Uint320 {
	hi, lo := bits.Mul64(x, x)
	return Uint320{lo, hi}
}

// SquareDecimal is x² of the decimal128 value x ({lo, hi} words, two's
// complement), as a Uint320.
func SquareDecimal(lo, hi uint64) Uint320 {
	if int64(hi) < 0 { // |x|
		var b uint64
		lo, b = bits.Sub64(0, lo, 0)
		hi, _ = bits.Sub64(0, hi, b)
	}
	// (hi·2^64 + lo)² = hi²·2^128 + 2·hi·lo·2^64 + lo²; |x| <= 2^127.
	llh, lll := bits.Mul64(lo, lo)
	lhh, lhl := bits.Mul64(lo, hi)
	hhh, hhl := bits.Mul64(hi, hi)
	r := Uint320{lll, llh, hhl, hhh}
	cross := Uint320{0, lhl << 1, lhh<<1 | lhl>>63, lhh >> 63}
	return r.Add(cross)
}

// Big returns a as a big.Int.
func (a Uint320) Big() *big.Int {
	z := new(big.Int)
	for i := len(a) - 1; i >= 0; i-- {
		z.Lsh(z, 64)
		z.Or(z, new(big.Int).SetUint64(a[i]))
	}
	return z
}

// String formats a in decimal.
func (a Uint320) String() string { return a.Big().String() }
