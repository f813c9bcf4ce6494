// Package snappy decodes the snappy block format: the format that
// github.com/golang/snappy's Encode writes and its Decode reads, and that
// Parquet uses for SNAPPY-compressed pages.
//
// Decode has exactly golang/snappy v0.0.4's contract: the same output for
// every valid input and an error for every input golang/snappy rejects. It
// is faster on streams made of many short operations (a few literal bytes,
// then a short copy), which is what columns of fixed-width numbers compress
// into: on amd64 the main loop is written in assembly and picks the source
// of each operation's bytes with conditional moves instead of branching on
// the tag's type.
//
// Decode never reads or writes outside src and dst, whatever the input.
package snappy

import (
	"encoding/binary"
	"errors"
)

var (
	// ErrCorrupt reports that the input is invalid.
	ErrCorrupt = errors.New("snappy: corrupt input")
	// ErrTooLarge reports that the uncompressed length is too large (only
	// on platforms where int has 32 bits).
	ErrTooLarge = errors.New("snappy: decoded block is too large")

	// errUnsupportedLiteralLength is returned, as golang/snappy does, for a
	// literal whose length does not fit in an int (32-bit platforms only).
	errUnsupportedLiteralLength = errors.New("snappy: unsupported literal length")
)

const wordSize = 32 << (^uint(0) >> 32 & 1)

// DecodedLen returns the length of the decoded block, read from the varint
// header at the start of src.
func DecodedLen(src []byte) (int, error) {
	n, _, err := decodedLen(src)
	return n, err
}

// decodedLen returns the decoded length and the size of the varint header.
func decodedLen(src []byte) (blockLen, headerLen int, err error) {
	v, n := binary.Uvarint(src)
	if n <= 0 || v > 0xffffffff {
		return 0, 0, ErrCorrupt
	}
	if wordSize == 32 && v > 0x7fffffff {
		return 0, 0, ErrTooLarge
	}
	return int(v), n, nil
}

// maxExpansion bounds how many output bytes one input byte can produce:
// the densest operation is a copy with a 2-byte offset, 3 bytes long, that
// writes 64 bytes (64/3 < 22).
const maxExpansion = 22

// Decode returns the decoded form of src. The returned slice is dst[:n] if
// dst is at least n bytes long, where n is the decoded length; otherwise a
// new slice is allocated. On error it returns a nil slice (and dst may have
// been partly overwritten).
//
// The dst and src must not overlap. It is valid to pass a nil dst.
//
// Decode handles the snappy block format, not the snappy framing format.
func Decode(dst, src []byte) ([]byte, error) {
	dLen, h, err := decodedLen(src)
	if err != nil {
		return nil, err
	}
	body := src[h:]
	// A length no stream of this size can produce is corrupt; reject it
	// before allocating (golang/snappy rejects it too, after allocating).
	if uint64(dLen) > uint64(len(body))*maxExpansion {
		return nil, ErrCorrupt
	}
	if dLen <= len(dst) {
		dst = dst[:dLen]
	} else {
		dst = make([]byte, dLen)
	}
	if err := decode(dst, body); err != nil {
		return nil, err
	}
	return dst, nil
}

// Slack the fast loop needs: it runs a pair of operations only while at
// least fastSrcSlack bytes of src remain from the tag on and at least
// fastDstSlack bytes of dst remain from the output position on, and only
// once at least fastMinOut bytes have been written (so that the one
// unsigned compare that validates a copy's offset cannot wrap).
const (
	fastSrcSlack = 127
	fastDstSlack = 128
	fastMinOut   = 8
)

// decode writes the decoding of src (without its length header) to dst,
// whose length is the decoded length. On amd64 the assembly loop decodes
// everything but the rare operations and the last bytes; this loop, with
// full bounds checks, does the rest.
func decode(dst, src []byte) error {
	d, s := 0, 0
	for s < len(src) {
		if haveFast && d >= fastMinOut && len(src)-s >= fastSrcSlack && len(dst)-d >= fastDstSlack {
			d, s = decodeFast(dst, src, d, s)
			if s >= len(src) {
				break
			}
		}

		var offset, length int
		tag := src[s]
		switch tag & 3 {
		case 0: // literal
			x := uint32(tag >> 2)
			switch {
			case x < 60:
				s++
			case x == 60:
				s += 2
				if uint(s) > uint(len(src)) {
					return ErrCorrupt
				}
				x = uint32(src[s-1])
			case x == 61:
				s += 3
				if uint(s) > uint(len(src)) {
					return ErrCorrupt
				}
				x = uint32(src[s-2]) | uint32(src[s-1])<<8
			case x == 62:
				s += 4
				if uint(s) > uint(len(src)) {
					return ErrCorrupt
				}
				x = uint32(src[s-3]) | uint32(src[s-2])<<8 | uint32(src[s-1])<<16
			default: // 63
				s += 5
				if uint(s) > uint(len(src)) {
					return ErrCorrupt
				}
				x = binary.LittleEndian.Uint32(src[s-4:])
			}
			length = int(x) + 1
			if length <= 0 {
				return errUnsupportedLiteralLength
			}
			if length > len(dst)-d || length > len(src)-s {
				return ErrCorrupt
			}
			copy(dst[d:], src[s:s+length])
			d += length
			s += length
			continue

		case 1: // copy, 1-byte offset
			s += 2
			if uint(s) > uint(len(src)) {
				return ErrCorrupt
			}
			length = 4 + int(tag>>2&7)
			offset = int(tag&0xe0)<<3 | int(src[s-1])

		case 2: // copy, 2-byte offset
			s += 3
			if uint(s) > uint(len(src)) {
				return ErrCorrupt
			}
			length = 1 + int(tag>>2)
			offset = int(binary.LittleEndian.Uint16(src[s-2:]))

		default: // copy, 4-byte offset
			s += 5
			if uint(s) > uint(len(src)) {
				return ErrCorrupt
			}
			length = 1 + int(tag>>2)
			offset = int(binary.LittleEndian.Uint32(src[s-4:]))
		}

		if offset <= 0 || d < offset || length > len(dst)-d {
			return ErrCorrupt
		}
		if offset >= length {
			copy(dst[d:d+length], dst[d-offset:])
			d += length
			continue
		}
		// Overlapping copy: the output repeats dst[d-offset:d]. Copy the
		// growing prefix of the repetition; each copy is between
		// non-overlapping ranges and doubles the period copied, and the
		// distance from start stays a multiple of offset, so the pattern
		// continues correctly.
		start := d - offset
		end := d + length
		for d < end {
			d += copy(dst[d:end], dst[start:d])
		}
	}
	if d != len(dst) {
		return ErrCorrupt
	}
	return nil
}
