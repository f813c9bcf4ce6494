//go:build amd64 && !purego

package snappy

// haveFast reports whether the assembly fast loop exists on this platform.
const haveFast = true

// decodeFast decodes operations from src[s:] into dst[d:] for as long as
// the input and output have room for its fixed-size loads and stores
// (fastSrcSlack bytes of src from the tag on, fastDstSlack bytes of dst
// from the output position on) and the next operation is a common one: a
// literal of at most 60 bytes, or a copy with a 1- or 2-byte offset that
// is at least 1 and at most d. It returns the positions it stopped at,
// always at an operation boundary, for decode's careful loop to continue.
// The caller guarantees d >= fastMinOut.
//
// It writes garbage bytes past the current output position (inside dst);
// later operations, or the careful loop, overwrite them.
//
//go:noescape
func decodeFast(dst, src []byte, d, s int) (dd, ss int)

// decTab drives the fast loop. For tag t it holds, as uint32s:
//
//	[2t], [2t+1]: the low and high halves of a uint64, the "offset base"
//	              minus 8;
//	[512+t]:      a mask for the 16 bits after the tag (bits 0..15) and the
//	              operation's output length (bits 16..23).
//
// The loop computes offset-8 = (base-8) + (next16 & mask):
//
//   - literal of 1..60 bytes: base 8, mask 0, so the offset check passes;
//   - copy with a 1-byte offset: base = high offset bits from the tag,
//     mask 0xff;
//   - copy with a 2-byte offset: base 0, mask 0xffff;
//   - longer literals and copies with 4-byte offsets: base 1<<40, which no
//     valid offset reaches, so the check sends them to the careful loop.
var decTab [768]uint32

func init() {
	for t := 0; t < 256; t++ {
		var base uint64
		var mask, length uint32
		switch t & 3 {
		case 0:
			if x := t >> 2; x < 60 {
				base, length = 8, uint32(x+1)
			} else {
				base = 1 << 40
			}
		case 1:
			base, mask, length = uint64(t&0xe0)<<3, 0xff, uint32(4+(t>>2&7))
		case 2:
			base, mask, length = 0, 0xffff, uint32(1+t>>2)
		case 3:
			base = 1 << 40
		}
		base -= 8 // wraps for copies; the loop's unsigned compare relies on it
		decTab[2*t] = uint32(base)
		decTab[2*t+1] = uint32(base >> 32)
		decTab[512+t] = mask | length<<16
	}
}
