package agg

import (
	"encoding"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/arrowagg/arrowagg/column"
)

var (
	_ encoding.BinaryMarshaler   = State{}
	_ encoding.BinaryUnmarshaler = (*State)(nil)
)

// stateVersion is the encoding's version: 3 has the tracked aggregates where
// 2, still read, had a flag for the ordered ones.
const stateVersion = 3

// MarshalBinary encodes the state (little-endian, versioned).
func (s State) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 128+len(s.BMin)+len(s.BMax))
	b = append(b, stateVersion, byte(s.Family))
	b = binary.LittleEndian.AppendUint64(b, uint64(s.Count))
	b = binary.LittleEndian.AppendUint64(b, uint64(s.NullCount))
	for _, w := range s.Sum {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	for _, f := range []float64{s.FSum, s.FComp, s.FSpecial} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
	}
	for _, w := range [4]uint64{s.Min[0], s.Min[1], s.Max[0], s.Max[1]} {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	b = binary.AppendUvarint(b, uint64(len(s.BMin)))
	b = append(b, s.BMin...)
	b = binary.AppendUvarint(b, uint64(len(s.BMax)))
	b = append(b, s.BMax...)
	b = binary.AppendUvarint(b, uint64(s.Tracks))
	if !s.Ordered() {
		return b, nil
	}
	for _, w := range [8]uint64{uint64(s.FirstRow), uint64(s.LastRow), uint64(s.MinRow), uint64(s.MaxRow),
		s.First[0], s.First[1], s.Last[0], s.Last[1]} {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	b = binary.AppendUvarint(b, uint64(len(s.BFirst)))
	b = append(b, s.BFirst...)
	b = binary.AppendUvarint(b, uint64(len(s.BLast)))
	b = append(b, s.BLast...)
	return b, nil
}

// ErrState is wrapped by every error of decoding a serialized state.
var ErrState = errors.New("invalid serialized aggregate state")

// UnmarshalBinary decodes a state written by MarshalBinary.
func (s *State) UnmarshalBinary(b []byte) error {
	const fixed = 2 + 8*(2+3+3+4)
	if len(b) < fixed {
		return fmt.Errorf("%w: %d bytes, want at least %d", ErrState, len(b), fixed)
	}
	if b[0] != stateVersion && b[0] != 2 {
		return fmt.Errorf("%w: version %d, want %d", ErrState, b[0], stateVersion)
	}
	if column.Family(b[1]) > column.FamilyCounts {
		return fmt.Errorf("%w: family %d", ErrState, b[1])
	}
	n := identity(column.Family(b[1]))
	p := b[2:]
	u := func() uint64 {
		v := binary.LittleEndian.Uint64(p)
		p = p[8:]
		return v
	}
	n.Count, n.NullCount = int64(u()), int64(u())
	for i := range n.Sum {
		n.Sum[i] = u()
	}
	n.FSum, n.FComp, n.FSpecial = math.Float64frombits(u()), math.Float64frombits(u()), math.Float64frombits(u())
	n.Min[0], n.Min[1], n.Max[0], n.Max[1] = u(), u(), u(), u()
	bstr := func(dst *[]byte) error {
		l, k := binary.Uvarint(p)
		if k <= 0 || l > uint64(len(p)-k) {
			return fmt.Errorf("%w: bad byte-string length", ErrState)
		}
		if l > 0 {
			*dst = append([]byte(nil), p[k:k+int(l)]...)
		}
		p = p[k+int(l):]
		return nil
	}
	if err := bstr(&n.BMin); err != nil {
		return err
	}
	if err := bstr(&n.BMax); err != nil {
		return err
	}
	if len(p) < 1 {
		return fmt.Errorf("%w: truncated", ErrState)
	}
	if b[0] == 2 && n.Family == column.FamilyCounts { // (version 3 came first)
		return fmt.Errorf("%w: family %d in version 2", ErrState, b[1])
	}
	if b[0] == 2 { // a flag byte for the ordered aggregates
		n.Tracks = Default
		if p[0] == 1 {
			n.Tracks = All
		}
		p = p[1:]
	} else {
		t, k := binary.Uvarint(p)
		if k <= 0 || t > uint64(All) || Set(t) != Tracking(Set(t)) || !Answers(n.Family).Has(Set(t)) {
			return fmt.Errorf("%w: tracked aggregates %#x", ErrState, t)
		}
		n.Tracks, p = Set(t), p[k:]
	}
	if n.Ordered() {
		if len(p) < 64 {
			return fmt.Errorf("%w: truncated ordered aggregates", ErrState)
		}
		n.FirstRow, n.LastRow, n.MinRow, n.MaxRow = int64(u()), int64(u()), int64(u()), int64(u())
		n.First[0], n.First[1], n.Last[0], n.Last[1] = u(), u(), u(), u()
		if err := bstr(&n.BFirst); err != nil {
			return err
		}
		if err := bstr(&n.BLast); err != nil {
			return err
		}
	}
	if len(p) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", ErrState, len(p))
	}
	if n.Count < 0 || n.NullCount < 0 {
		return fmt.Errorf("%w: negative count", ErrState)
	}
	*s = n
	return nil
}
