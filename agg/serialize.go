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

// stateVersion is the encoding's version: 5 is 4's layout with the sketches
// of numbers hashed by today's HashInt (4, still read, hashed them by
// SplitMix64's finalizer: its sketches of strings and binaries are read, a
// sketch of numbers is refused, as it would merge wrongly with today's); 4
// adds the sums of squares and the sketch of the statistics after the
// ordered aggregates; 3, still read, has the tracked aggregates (none of the
// statistics), where 2, still read, had a flag for the ordered ones.
const stateVersion = 5

// v3All is every aggregate a version 3 state can track.
const v3All = Default | Ordered

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
	if s.Ordered() {
		for _, w := range [8]uint64{uint64(s.FirstRow), uint64(s.LastRow), uint64(s.MinRow), uint64(s.MaxRow),
			s.First[0], s.First[1], s.Last[0], s.Last[1]} {
			b = binary.LittleEndian.AppendUint64(b, w)
		}
		b = binary.AppendUvarint(b, uint64(len(s.BFirst)))
		b = append(b, s.BFirst...)
		b = binary.AppendUvarint(b, uint64(len(s.BLast)))
		b = append(b, s.BLast...)
	}
	// The statistics (version 4): the sums of squares of the families that
	// have them, then a flag and the sketch's registers.
	if s.Tracks.Any(Moments) {
		switch s.Family {
		case column.FamilySigned, column.FamilyUnsigned, column.FamilyDecimal:
			for _, w := range s.Sq {
				b = binary.LittleEndian.AppendUint64(b, w)
			}
		case column.FamilyFloat:
			for _, f := range []float64{s.FSq, s.FSqComp, s.FSqSpecial} {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
			}
		}
	}
	if s.Tracks.Has(ApproxDistinct) && s.Family != column.FamilyBool {
		switch k := s.Sketch; {
		case k == nil:
			b = append(b, 0)
		case k.overflow:
			b = append(b, 1)
			b = append(b, k.Registers[:]...)
		default:
			b = append(b, 2)
			b = append(b, k.Registers[:]...)
			b = binary.AppendUvarint(b, uint64(len(k.exact)))
			for _, h := range k.exact {
				b = binary.LittleEndian.AppendUint64(b, h)
			}
		}
	}
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
	if b[0] != stateVersion && b[0] != 4 && b[0] != 3 && b[0] != 2 {
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
			n.Tracks = v3All
		}
		p = p[1:]
	} else {
		t, k := binary.Uvarint(p)
		all := All
		if b[0] == 3 {
			all = v3All
		}
		if k <= 0 || t&^uint64(all) != 0 || Set(t) != Tracking(Set(t)) || !Answers(n.Family).Has(Set(t)) {
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
	if err := n.unmarshalStats(&p); err != nil {
		return err
	}
	if b[0] == 4 && n.Sketch != nil && n.Family != column.FamilyBytes {
		return fmt.Errorf("%w: a version 4 sketch of %s values hashed by an earlier function: approx_distinct cannot merge it with this version's; encode the state again", ErrState, n.Family)
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

// unmarshalStats reads what MarshalBinary writes of the statistics that n
// tracks from *p, and moves *p past it.
func (n *State) unmarshalStats(p *[]byte) error {
	q := *p
	if n.Tracks.Any(Moments) {
		switch n.Family {
		case column.FamilySigned, column.FamilyUnsigned, column.FamilyDecimal:
			if len(q) < 8*len(n.Sq) {
				return fmt.Errorf("%w: truncated sum of squares", ErrState)
			}
			for i := range n.Sq {
				n.Sq[i], q = binary.LittleEndian.Uint64(q), q[8:]
			}
		case column.FamilyFloat:
			if len(q) < 24 {
				return fmt.Errorf("%w: truncated sum of squares", ErrState)
			}
			n.FSq = math.Float64frombits(binary.LittleEndian.Uint64(q))
			n.FSqComp = math.Float64frombits(binary.LittleEndian.Uint64(q[8:]))
			n.FSqSpecial = math.Float64frombits(binary.LittleEndian.Uint64(q[16:]))
			q = q[24:]
		}
	}
	if n.Tracks.Has(ApproxDistinct) && n.Family != column.FamilyBool {
		if len(q) < 1 || q[0] > 2 {
			return fmt.Errorf("%w: bad sketch flag", ErrState)
		}
		flag := q[0]
		q = q[1:]
		if flag > 0 {
			if len(q) < SketchRegisters {
				return fmt.Errorf("%w: truncated sketch", ErrState)
			}
			k := new(Sketch)
			copy(k.Registers[:], q)
			for _, r := range k.Registers {
				if r > sketchQ+1 {
					return fmt.Errorf("%w: sketch register %d", ErrState, r)
				}
			}
			q = q[SketchRegisters:]
			k.overflow = flag == 1
			if flag == 2 {
				c, w := binary.Uvarint(q)
				if w <= 0 || c > SketchExact || uint64(len(q)-w) < 8*c {
					return fmt.Errorf("%w: bad exact hashes of a sketch", ErrState)
				}
				q = q[w:]
				k.exact = make([]uint64, c)
				for i := range k.exact {
					k.exact[i], q = binary.LittleEndian.Uint64(q), q[8:]
					if i > 0 && k.exact[i] <= k.exact[i-1] {
						return fmt.Errorf("%w: exact hashes of a sketch out of order", ErrState)
					}
				}
			}
			n.Sketch = k
		}
	}
	*p = q
	return nil
}
