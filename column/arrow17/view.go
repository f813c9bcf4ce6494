package arrow17

import (
	"fmt"
	"sort"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"

	"github.com/arrowagg/arrowagg/column"
)

// FixedSizeWidth is the byte width of a fixed_size_binary type, or of the
// storage of an extension type over one; 0 for any other type.
func FixedSizeWidth(dt arrow.DataType) int {
	if e, ok := dt.(arrow.ExtensionType); ok {
		dt = e.StorageType()
	}
	if t, ok := dt.(*arrow.FixedSizeBinaryType); ok {
		return t.ByteWidth
	}
	return 0
}

// OwnsValidity reports whether ViewOf makes the validity bitmap of an
// array of type t (a bit per element, allocated for the view): null, run-end
// encoded and union arrays, whose nulls are no buffer of their own, and
// extension arrays over them. A reader charges such a bitmap to its memory
// budget before the view is made.
func OwnsValidity(t arrow.DataType) bool {
	switch t := t.(type) {
	case arrow.ExtensionType:
		return OwnsValidity(t.StorageType())
	case *arrow.NullType, *arrow.RunEndEncodedType, arrow.UnionType:
		return true
	}
	return false
}

// ViewOf returns the view of an array. It fails for types no backend
// aggregates. The view borrows the array's buffers: keep the array alive
// (retained) while the view is in use.
//
// An Opaque view has the array's validity and no values. Its nulls are the
// logical ones: those of the values of a run-end encoded array, expanded over
// their runs (in a bitmap the view owns), every element of a null array, the
// storage's of an extension array, those of the child values a union's
// elements select (union.go: a union has no validity of its own). A struct array's view is Opaque, of its
// own validity (what a dictionary of structs counts): the fields of a struct
// column are leaves of their own (see Leaves and Extract).
func ViewOf(arr arrow.Array) (column.View, error) {
	switch a := arr.(type) {
	case *array.RunEndEncoded:
		return runEndView(a)
	case *array.Null:
		v := column.View{Type: a.DataType(), Kind: column.Opaque, Len: a.Len(), NullCount: a.Len()}
		if v.Len > 0 {
			v.Validity = make([]byte, bitutil.BytesForBits(int64(v.Len)))
		}
		return v, nil
	case array.ExtensionArray:
		return extensionView(a)
	case *array.Struct: // its own validity: a dictionary's values, an extension's storage
		return structView(a)
	case array.Union:
		return unionView(a)
	}
	data := arr.Data()
	dt := arr.DataType()
	v := column.View{Type: dt, Len: arr.Len(), NullCount: arr.NullN(), Offset: data.Offset(), ValidityOffset: data.Offset()}
	if v.NullCount > 0 {
		if buf := data.Buffers()[0]; buf != nil {
			v.Validity = buf.Bytes()
		}
	}
	if v.NullCount > 0 && v.Validity == nil {
		return column.View{}, fmt.Errorf("array of type %s has %d nulls but no validity bitmap", dt, v.NullCount)
	}
	if d, ok := dt.(*arrow.DictionaryType); ok {
		ik, err := IndexKind(d)
		if err != nil {
			return column.View{}, err
		}
		dictArr, ok := arr.(*array.Dictionary)
		if !ok {
			return column.View{}, fmt.Errorf("array of type %s is not a dictionary array", dt)
		}
		dv, err := ViewOf(dictArr.Dictionary())
		if err != nil {
			return column.View{}, fmt.Errorf("dictionary values: %w", err)
		}
		v.Type, v.Kind, v.IndexKind, v.Dict = d.ValueType, dv.Kind, ik, &dv
		v.Values = bufBytes(data, 1)
		return v, v.Check()
	}
	k, err := KindOf(dt)
	if err != nil {
		return column.View{}, err
	}
	v.Kind = k
	if k == column.FixedSizeBinary {
		v.Width = FixedSizeWidth(dt)
	}
	switch k {
	case column.Opaque:
		return v, v.Check()
	case column.Binary, column.LargeBinary:
		v.Offsets = bufBytes(data, 1)
		v.Values = bufBytes(data, 2)
	default:
		v.Values = bufBytes(data, 1)
	}
	return v, v.Check()
}

// extensionView is the Opaque view of an extension array: its storage's
// validity. That of a NarrowDecimalType array is its storage's values, of
// kind Decimal32 or Decimal64.
func extensionView(a array.ExtensionArray) (column.View, error) {
	k, err := KindOf(a.DataType())
	if err != nil {
		return column.View{}, err
	}
	v, err := ViewOf(a.Storage())
	if err != nil {
		return column.View{}, err
	}
	if k == column.Decimal32 || k == column.Decimal64 {
		if v.Kind != column.FixedSizeBinary || v.ElemWidth() != k.Width() {
			return column.View{}, fmt.Errorf("%s array over storage %s", a.DataType(), a.Storage().DataType())
		}
		v.Type, v.Kind = a.DataType(), k
		return v, v.Check()
	}
	// (arrow-go makes no extension arrays over dictionaries.)
	v.Type, v.Kind, v.Values, v.Offsets = a.DataType(), column.Opaque, nil, nil
	return v, nil
}

// structView is the Opaque view of a struct array's own validity (not its
// fields').
func structView(a *array.Struct) (column.View, error) {
	data := a.Data()
	v := column.View{Type: a.DataType(), Kind: column.Opaque, Len: a.Len(), NullCount: a.NullN(), Offset: data.Offset(), ValidityOffset: data.Offset()}
	if v.NullCount > 0 {
		if v.Validity = bufBytes(data, 0); v.Validity == nil {
			return column.View{}, fmt.Errorf("array of type %s has %d nulls but no validity bitmap", v.Type, v.NullCount)
		}
	}
	return v, v.Check()
}

// runEndView is the Opaque view of a run-end encoded array: an element is
// null where the value of its run is (a null, or a valid dictionary index
// to a null). The validity bitmap is made here, a bit per element.
func runEndView(a *array.RunEndEncoded) (column.View, error) {
	v := column.View{Type: a.DataType(), Kind: column.Opaque, Len: a.Len()}
	if v.Len == 0 {
		return v, nil
	}
	ends, err := runEnds(a.RunEndsArr())
	if err != nil {
		return column.View{}, err
	}
	vals := a.Values()
	if ends.len() > vals.Len() {
		return column.View{}, fmt.Errorf("run-end encoded array of %d runs but %d values", ends.len(), vals.Len())
	}
	off, n := int64(a.Data().Offset()), int64(v.Len)
	bits := make([]byte, bitutil.BytesForBits(n))
	// The first run that ends after the array's offset, then the runs in
	// order until the array's end.
	j := sort.Search(ends.len(), func(j int) bool { return ends.at(j) > off })
	pos := int64(0) // elements of the array covered so far
	for ; pos < n && j < ends.len(); j++ {
		end := ends.at(j) - off
		if end <= pos {
			return column.View{}, fmt.Errorf("run-end encoded array: run end %d after %d", ends.at(j), pos+off)
		}
		end = min(end, n)
		null, err := logicallyNull(vals, j)
		if err != nil {
			return column.View{}, fmt.Errorf("run-end encoded array: value %d: %w", j, err)
		}
		if null {
			v.NullCount += int(end - pos)
		} else {
			bitutil.SetBitsTo(bits, pos, end-pos, true)
		}
		pos = end
	}
	if pos < n {
		return column.View{}, fmt.Errorf("run-end encoded array: the runs end at %d, the array at %d", pos+off, n+off)
	}
	if v.NullCount > 0 {
		v.Validity = bits
	}
	return v, nil
}

// runEndArray is the run ends of a run-end encoded array, of any width.
type runEndArray struct {
	i16 []int16
	i32 []int32
	i64 []int64
}

func runEnds(arr arrow.Array) (runEndArray, error) {
	switch a := arr.(type) {
	case *array.Int16:
		return runEndArray{i16: a.Int16Values()}, nil
	case *array.Int32:
		return runEndArray{i32: a.Int32Values()}, nil
	case *array.Int64:
		return runEndArray{i64: a.Int64Values()}, nil
	}
	return runEndArray{}, fmt.Errorf("run ends of type %s", arr.DataType())
}

func (r runEndArray) len() int { return len(r.i16) + len(r.i32) + len(r.i64) }

func (r runEndArray) at(j int) int64 {
	switch {
	case r.i16 != nil:
		return int64(r.i16[j])
	case r.i32 != nil:
		return int64(r.i32[j])
	}
	return int64(r.i64[j])
}

func bufBytes(data arrow.ArrayData, i int) []byte {
	bufs := data.Buffers()
	if i >= len(bufs) || bufs[i] == nil {
		return nil
	}
	return bufs[i].Bytes()
}
