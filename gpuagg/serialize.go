package gpuagg

import (
	"encoding"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/column"
)

var (
	_ encoding.BinaryMarshaler   = State{}
	_ encoding.BinaryUnmarshaler = (*State)(nil)
)

const stateVersion = 2

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
	if !s.Ordered {
		return append(b, 0), nil
	}
	b = append(b, 1)
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

// errState is wrapped by every decoding error.
var errState = errors.New("invalid serialized aggregate state")

// UnmarshalBinary decodes a state written by MarshalBinary.
func (s *State) UnmarshalBinary(b []byte) error {
	const fixed = 2 + 8*(2+3+3+4)
	if len(b) < fixed {
		return fmt.Errorf("%w: %d bytes, want at least %d", errState, len(b), fixed)
	}
	if b[0] != stateVersion {
		return fmt.Errorf("%w: version %d, want %d", errState, b[0], stateVersion)
	}
	if column.Family(b[1]) > column.FamilyBytes {
		return fmt.Errorf("%w: family %d", errState, b[1])
	}
	n := NewState(column.Family(b[1]))
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
			return fmt.Errorf("%w: bad byte-string length", errState)
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
		return fmt.Errorf("%w: truncated", errState)
	}
	n.Ordered, p = p[0] == 1, p[1:]
	if n.Ordered {
		if len(p) < 64 {
			return fmt.Errorf("%w: truncated ordered aggregates", errState)
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
		return fmt.Errorf("%w: %d trailing bytes", errState, len(p))
	}
	if n.Count < 0 || n.NullCount < 0 {
		return fmt.Errorf("%w: negative count", errState)
	}
	*s = n
	return nil
}

// StatesSchema is the schema of partial states as a record batch: one row per
// column, with the column's name, its Arrow type as text, the state, and the
// number of rows the states cover.
var StatesSchema = arrow.NewSchema([]arrow.Field{
	{Name: "name", Type: arrow.BinaryTypes.String},
	{Name: "type", Type: arrow.BinaryTypes.String},
	{Name: "state", Type: arrow.BinaryTypes.Binary},
	{Name: "rows", Type: arrow.PrimitiveTypes.Int64}, // rows the states cover
}, nil)

// StatesRecord serializes the accumulator's partial states into a record batch
// (StatesSchema), to be sent elsewhere and merged with MergeRecord.
func (a *Accumulator) StatesRecord(mem memory.Allocator) (arrow.Record, error) {
	b := array.NewRecordBuilder(mem, StatesSchema)
	defer b.Release()
	names := b.Field(0).(*array.StringBuilder)
	types := b.Field(1).(*array.StringBuilder)
	states := b.Field(2).(*array.BinaryBuilder)
	rows := b.Field(3).(*array.Int64Builder)
	for i, l := range a.leaves {
		enc, err := a.states[i].MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", l.Name, err)
		}
		names.Append(l.Name)
		types.Append(l.Type.String())
		states.Append(enc)
		rows.Append(a.rows)
	}
	return b.NewRecord(), nil
}

// MergeRecord merges partial states serialized by StatesRecord (of the same
// request) into the accumulator, after its own.
func (a *Accumulator) MergeRecord(rec arrow.Record) error {
	if !rec.Schema().Equal(StatesSchema) {
		return fmt.Errorf("%w: record schema %s", errState, rec.Schema())
	}
	if int(rec.NumRows()) != len(a.leaves) {
		return fmt.Errorf("%w: %d states for %d columns", errState, rec.NumRows(), len(a.leaves))
	}
	names := rec.Column(0).(*array.String)
	types := rec.Column(1).(*array.String)
	enc := rec.Column(2).(*array.Binary)
	decoded := make([]State, len(a.leaves))
	for i, l := range a.leaves {
		if names.Value(i) != l.Name || types.Value(i) != l.Type.String() {
			return fmt.Errorf("%w: row %d is column %q (%s), want %q (%s)", errState, i, names.Value(i), types.Value(i), l.Name, l.Type)
		}
		if err := decoded[i].UnmarshalBinary(enc.Value(i)); err != nil {
			return fmt.Errorf("column %q: %w", l.Name, err)
		}
		if decoded[i].Family != a.states[i].Family {
			return fmt.Errorf("%w: column %q has family %s, want %s", errState, l.Name, decoded[i].Family, a.states[i].Family)
		}
	}
	var rows int64
	if len(a.leaves) > 0 {
		rows = rec.Column(3).(*array.Int64).Value(0)
	}
	a.mergeStates(decoded, rows)
	return nil
}
