package engine

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/agg"
)

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
		enc, err := a.c.States()[i].MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", l.Name, err)
		}
		names.Append(l.Name)
		types.Append(l.Type.String())
		states.Append(enc)
		rows.Append(a.c.Rows())
	}
	return b.NewRecord(), nil
}

// MergeRecord merges partial states serialized by StatesRecord (of the same
// request) into the accumulator, after its own.
func (a *Accumulator) MergeRecord(rec arrow.Record) error {
	if !rec.Schema().Equal(StatesSchema) {
		return fmt.Errorf("%w: record schema %s", agg.ErrState, rec.Schema())
	}
	if int(rec.NumRows()) != len(a.leaves) {
		return fmt.Errorf("%w: %d states for %d columns", agg.ErrState, rec.NumRows(), len(a.leaves))
	}
	names := rec.Column(0).(*array.String)
	types := rec.Column(1).(*array.String)
	enc := rec.Column(2).(*array.Binary)
	decoded := make([]agg.State, len(a.leaves))
	for i, l := range a.leaves {
		if names.Value(i) != l.Name || types.Value(i) != l.Type.String() {
			return fmt.Errorf("%w: row %d is column %q (%s), want %q (%s)", agg.ErrState, i, names.Value(i), types.Value(i), l.Name, l.Type)
		}
		if err := decoded[i].UnmarshalBinary(enc.Value(i)); err != nil {
			return fmt.Errorf("column %q: %w", l.Name, err)
		}
		if decoded[i].Family != a.c.States()[i].Family {
			return fmt.Errorf("%w: column %q has family %s, want %s", agg.ErrState, l.Name, decoded[i].Family, a.c.States()[i].Family)
		}
	}
	var rows int64
	if len(a.leaves) > 0 {
		rows = rec.Column(3).(*array.Int64).Value(0)
	}
	a.c.MergeStates(decoded, rows)
	return nil
}
