package agg

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"weak"

	"github.com/zeebo/xxh3"
)

// approx_distinct is a HyperLogLog sketch of 2^SketchPrecision one-byte
// registers over a fixed 64-bit hash of each valid value:
//
//   - the hash: integers by value (signed values sign-extended, unsigned
//     zero-extended to 64 bits, so an int32 and an int64 column of the same
//     values hash alike), through a three-round Feistel network of 32-bit
//     multiplies (HashInt, defined there); floats
//     by their float64 value with -0 as +0 and every NaN as one value
//     (HashFloat); decimal128 values by their two words (HashDecimal);
//     strings and binaries by their bytes with XXH3-64, seed 0 (HashBytes).
//     Every hash is the same in every process and on every machine, so
//     sketches merge across runs;
//   - the register of hash h is its top SketchPrecision bits, its rank one
//     plus the number of leading zeros of the 50 bits below (1..51), and a
//     register keeps the largest rank it has seen: registers merge by max,
//     so the sketch of a union is the merge of the sketches, in any order;
//   - while at most SketchExact distinct hashes were folded, the sketch
//     also keeps them (sorted), and the estimate is their number: exact but
//     for collisions of 64-bit hashes (about one in 2^45 at that size);
//   - beyond, the estimate is Ertl's improved estimator (O. Ertl, "New
//     cardinality estimation algorithms for HyperLogLog sketches", 2017),
//     unbiased without empirical bias tables (measured from 1 to 2^28
//     distinct values): a relative standard error of 1.04/sqrt(2^14) =
//     0.81%.
//
// Booleans need no sketch: their distinct values follow from the counts.

// SketchPrecision is the number of hash bits that pick a register.
const SketchPrecision = 14

// SketchRegisters is the number of registers of a sketch (16 KiB).
const SketchRegisters = 1 << SketchPrecision

// sketchQ is the number of hash bits below the register index: ranks go
// from 1 to sketchQ+1.
const sketchQ = 64 - SketchPrecision

// SketchMaxRank is the largest rank of a hash, and of a register.
const SketchMaxRank = sketchQ + 1

// SketchExact is the most distinct hashes a sketch keeps, and counts
// exactly.
const SketchExact = 1024

// Sketch is a HyperLogLog sketch: its registers, and the distinct hashes
// folded while there are at most SketchExact of them. The zero Sketch is
// empty. A Sketch in a State is never written again (Merge makes a new
// one), so states that share one stay plain values.
type Sketch struct {
	// Registers hold the largest rank of the hashes of each register.
	Registers [SketchRegisters]uint8
	exact     []uint64 // sorted distinct hashes, while !overflow
	overflow  bool     // more than SketchExact distinct hashes were folded
	// from is the sketch this one was cloned from (Clone), whose
	// registers it holds or raised: a merge of the two is this one once
	// both have overflowed (weak: a sketch keeps no chain of the sketches
	// before it alive).
	from weak.Pointer[Sketch]
}

// SketchSlot is the register and the rank of hash h.
func SketchSlot(h uint64) (reg uint32, rank uint8) {
	return uint32(h >> sketchQ), uint8(bits.LeadingZeros64(h<<SketchPrecision|1<<(SketchPrecision-1))) + 1
}

// Add folds hash h into the sketch (registers and exact hashes; backends'
// loops update Registers themselves and hand the distinct hashes over with
// SetExact).
func (k *Sketch) Add(h uint64) {
	r, rank := SketchSlot(h)
	if rank > k.Registers[r] {
		k.Registers[r] = rank
	}
	if k.overflow {
		return
	}
	i, found := slices.BinarySearch(k.exact, h)
	if found {
		return
	}
	if len(k.exact) == SketchExact {
		k.exact, k.overflow = nil, true
		return
	}
	k.exact = slices.Insert(k.exact, i, h)
}

// ExactHashes returns the distinct hashes folded into k, sorted, while
// there are at most SketchExact of them (nil once k has overflowed them:
// Overflowed). The caller must not modify them.
func (k *Sketch) ExactHashes() []uint64 {
	if k.overflow {
		return nil
	}
	return k.exact
}

// Overflowed reports whether more than SketchExact distinct hashes were
// folded into k: its exact hashes are gone, and a hash whose rank is at
// most its register's changes nothing of k (nor of any merge with k).
func (k *Sketch) Overflowed() bool { return k.overflow }

// Clone returns a new sketch of the same hashes as k, to fold more into:
// the sketch of k's values and those folded later.
func (k *Sketch) Clone() *Sketch {
	c := new(Sketch)
	c.Registers, c.overflow, c.from = k.Registers, k.overflow, weak.Make(k)
	if !k.overflow {
		c.exact = slices.Clone(k.exact)
	}
	return c
}

// SetExact records the distinct hashes of the values folded into the
// registers, when they are known (overflow false: hashes are all of them,
// distinct, in any order; SetExact sorts them); with overflow, that there
// were more than SketchExact of them.
func (k *Sketch) SetExact(hashes []uint64, overflow bool) {
	if overflow || len(hashes) > SketchExact {
		k.exact, k.overflow = nil, true
		return
	}
	k.exact, k.overflow = slices.Clone(hashes), false
	slices.Sort(k.exact)
}

// Merge folds o into k: every register the larger of the two, and the union
// of the exact hashes while it has at most SketchExact.
func (k *Sketch) Merge(o *Sketch) {
	le := binary.LittleEndian
	for i := 0; i < SketchRegisters; i += 8 {
		le.PutUint64(k.Registers[i:], maxBytes(le.Uint64(k.Registers[i:]), le.Uint64(o.Registers[i:])))
	}
	if k.overflow || o.overflow {
		k.exact, k.overflow = nil, true
		return
	}
	u := make([]uint64, 0, len(k.exact)+len(o.exact))
	a, b := k.exact, o.exact
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0] < b[0]:
			u, a = append(u, a[0]), a[1:]
		case b[0] < a[0]:
			u, b = append(u, b[0]), b[1:]
		default:
			u, a, b = append(u, a[0]), a[1:], b[1:]
		}
	}
	u = append(append(u, a...), b...)
	if len(u) > SketchExact {
		k.exact, k.overflow = nil, true
		return
	}
	k.exact = u
}

const highBits = 0x8080808080808080

// maxBytes is the bytewise maximum of a and b, whose bytes are below 128
// (ranks are at most 51): a SWAR compare through the free top bits.
func maxBytes(a, b uint64) uint64 {
	ge := ((a | highBits) - b) & highBits // top bit of each byte: a >= b
	mask := (ge >> 7) * 0xff
	return a&mask | b&^mask
}

// mergeSketches is the sketch of the union of a and b's values: one of
// them when the other is empty (nil), else a new sketch.
func mergeSketches(a, b *Sketch) *Sketch {
	switch {
	case b == nil || a == b:
		return a
	case a == nil:
		return b
	case a.overflow && b.overflow && b.from == weak.Make(a):
		return b // b is a's clone with more hashes: the union
	case a.overflow && b.overflow && a.from == weak.Make(b):
		return a
	}
	out := *a // (Merge makes a new slice of exact hashes: a's is not written)
	out.Merge(b)
	return &out
}

// The sketch hash of a 64-bit word is a Feistel network of three rounds on
// its 32-bit halves (hi, lo): lo ^= F1(hi), hi ^= F2(lo), lo ^= F3(hi), and
// the hash is lo<<32 | hi. A round function is a multiply of 32 by 32 bits
// plus a 64-bit constant, folded: F(a) = low ^ high half of a*k + d (mod
// 2^64). Each round is one multiply and one xor where the previous hash
// (SplitMix64's finalizer) took two 64-bit multiplies and three 64-bit
// shifts, which bounded the GPU's sketch kernels. F1's d is 0, so that F1
// of a sign word is that word (the fold of (2^32-1)k is -k ^ (k-1) = ^0):
// the first round of an int32 widened is lo ^= hi, one instruction on the
// GPU. Every round is invertible, so distinct integers hash apart. The
// top word's bits (a register and the first 18 bits of its rank) follow a
// flip of any input bit as SplitMix64's do (about 1% from one half), and
// the estimates on runs, strides, timestamps and floats are as close (agg's
// tests).
const (
	hashK1 = 0x9e3779b9
	hashK2 = 0x85ebca6b
	hashK3 = 0xc2b2ae35
	hashD2 = 0x27d4eb2f165667b1
	hashD3 = 0x94d049bb133111eb
)

// hashRound is a round function: the folded a*k + d.
func hashRound(a, k uint32, d uint64) uint32 {
	p := uint64(a)*uint64(k) + d
	return uint32(p) ^ uint32(p>>32)
}

// HashInt is the sketch hash of an integer, signed values sign-extended to
// 64 bits, unsigned ones zero-extended.
func HashInt(x uint64) uint64 {
	hi, lo := uint32(x>>32), uint32(x)
	lo ^= hashRound(hi, hashK1, 0)
	hi ^= hashRound(lo, hashK2, hashD2)
	lo ^= hashRound(hi, hashK3, hashD3)
	return uint64(lo)<<32 | uint64(hi)
}

// canonicalNaN is the one bit pattern every NaN hashes as.
const canonicalNaN = 0x7ff8000000000000

// HashFloat is the sketch hash of a float (float32 values widened): values
// that compare equal hash alike (-0 as +0), and every NaN is one value.
func HashFloat(x float64) uint64 {
	b := math.Float64bits(x)
	switch {
	case x == 0:
		b = 0
	case x != x:
		b = canonicalNaN
	}
	return HashInt(b)
}

// HashDecimal is the sketch hash of a decimal128 value ({lo, hi} words).
func HashDecimal(lo, hi uint64) uint64 { return HashInt(lo ^ HashInt(hi)) }

// HashBytes is the sketch hash of a string or binary value: XXH3-64 of its
// bytes, seed 0.
func HashBytes(b []byte) uint64 { return xxh3.Hash(b) }

// estimate is Ertl's improved estimator of the number of distinct hashes
// folded into k (0 for nil).
func (k *Sketch) estimate() float64 {
	if k == nil {
		return 0
	}
	if !k.overflow {
		return float64(len(k.exact))
	}
	return k.hll()
}

// hll is the registers' estimate (Ertl's improved estimator).
func (k *Sketch) hll() float64 {
	var c [sketchQ + 2]int
	for _, r := range k.Registers {
		c[r]++
	}
	const m = float64(SketchRegisters)
	z := m * sketchTau(1-float64(c[sketchQ+1])/m)
	for r := sketchQ; r >= 1; r-- {
		z = 0.5 * (z + float64(c[r]))
	}
	z += m * sketchSigma(float64(c[0])/m)
	const alphaInf = 0.5 / math.Ln2
	return alphaInf * m * m / z
}

// sketchSigma is Ertl's σ(x) = x + Σ_{k≥1} x^(2^k) 2^(k-1) (infinite at 1).
func sketchSigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		next := z + x*y
		if next == z {
			return z
		}
		z = next
		y += y
	}
}

// sketchTau is Ertl's τ(x) = (1 - x - Σ_{k≥1} (1 - x^(2^-k))² 2^-k) / 3.
func sketchTau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		y *= 0.5
		next := z - (1-x)*(1-x)*y
		if next == z {
			return z / 3
		}
		z = next
	}
}
