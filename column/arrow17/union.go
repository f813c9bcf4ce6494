package arrow17

import (
	"fmt"
	"sort"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"

	"github.com/arrowagg/arrowagg/column"
)

// Unions (sparse and dense) have no validity bitmap: an element of a union
// is null where the child value it selects is, as Arrow C++'s
// Array::ComputeLogicalNullCount and pyarrow's pc.is_null define it. Element
// i of a sparse union selects element i of the child its type code names
// (arrow-go slices a sparse union's children by the union's offset); of a
// dense union, element offsets[i] of that child. Whether that child value is
// null is logicallyNull's question, recursively: a union child's by its own
// children, a null child's always, a struct child's by its validity, a
// dictionary child's by its index and the value it points at, a run-end
// encoded child's by the value of its run, an extension child's by its
// storage. The work is one step per element and level of nesting (a binary
// search where a run-end encoded array lies between), the nesting bounded
// by the type's.

// unionView is the Opaque view of a union array: its logical nulls, in a
// bitmap the view owns.
func unionView(a array.Union) (column.View, error) {
	v := column.View{Type: a.DataType(), Kind: column.Opaque, Len: a.Len()}
	if v.Len == 0 {
		return v, nil
	}
	bits := make([]byte, bitutil.BytesForBits(int64(v.Len)))
	for i := 0; i < v.Len; i++ {
		null, err := logicallyNull(a, i)
		if err != nil {
			return column.View{}, err
		}
		if null {
			v.NullCount++
		} else {
			bitutil.SetBit(bits, i)
		}
	}
	if v.NullCount > 0 {
		v.Validity = bits
	}
	return v, nil
}

// CheckUnion checks that every element of union array a selects a child
// value that exists: a type code of the union's type, of a child the array
// has, and (dense) an offset inside that child. Its errors say which
// element is wrong and how; a union that passes can be viewed (ViewOf)
// without reading outside its buffers, but for its children's own (a nested
// union is checked when its element is read).
func CheckUnion(a array.Union) error {
	if err := unionBuffers(a); err != nil {
		return err
	}
	for i := 0; i < a.Len(); i++ {
		if _, _, err := unionSlot(a, i); err != nil {
			return err
		}
	}
	return nil
}

// unionBuffers checks that the type codes (and a dense union's offsets)
// cover the array's elements.
func unionBuffers(a array.Union) error {
	n := int64(a.Data().Offset()) + int64(a.Len())
	if a.Len() == 0 {
		return nil
	}
	if codes := a.TypeCodes(); codes == nil || int64(codes.Len()) < n {
		return fmt.Errorf("%s array of %d elements at offset %d: type code buffer of %d bytes", a.DataType().Name(), a.Len(), a.Data().Offset(), bufLen(a.Data(), 1))
	}
	if a.Mode() == arrow.DenseMode && int64(bufLen(a.Data(), 2)) < 4*n {
		return fmt.Errorf("%s array of %d elements at offset %d: offset buffer of %d bytes", a.DataType().Name(), a.Len(), a.Data().Offset(), bufLen(a.Data(), 2))
	}
	if len(a.Data().Children()) != a.NumFields() {
		return fmt.Errorf("%s array of %d children for a type of %d", a.DataType().Name(), len(a.Data().Children()), a.NumFields())
	}
	return nil
}

func bufLen(data arrow.ArrayData, i int) int { return len(bufBytes(data, i)) }

// unionSlot returns the child of union a that element i selects, and the
// element of that child.
func unionSlot(a array.Union, i int) (arrow.Array, int, error) {
	code := a.TypeCode(i)
	ids := a.UnionType().ChildIDs()
	if code < 0 || int(code) >= len(ids) || ids[code] == arrow.InvalidUnionChildID || a.Field(ids[code]) == nil {
		return nil, 0, fmt.Errorf("%s element %d has type code %d, which is none of its type's %v", a.DataType().Name(), i, code, a.UnionType().TypeCodes())
	}
	child := a.Field(ids[code])
	j := i // a sparse union's children are sliced as the union is
	if a.Mode() == arrow.DenseMode {
		j = int(a.(*array.DenseUnion).ValueOffset(i))
	}
	if j < 0 || j >= child.Len() {
		return nil, 0, fmt.Errorf("%s element %d selects value %d of child %q (type code %d), which has %d values", a.DataType().Name(), i, j, a.UnionType().Fields()[ids[code]].Name, code, child.Len())
	}
	return child, j, nil
}

// logicallyNull reports whether element i of arr is null: null in its
// validity, any element of a null array, a valid dictionary index to a null,
// a union element whose child value is null, a run-end encoded element whose
// run's value is null, an extension element whose storage's is. Its error
// says that a union's element, a run-end encoded array's run or a
// dictionary's index selects nothing (as the dictionaries of the columns
// themselves, whose indices outside the dictionary are errors too).
func logicallyNull(arr arrow.Array, i int) (bool, error) {
	switch a := arr.(type) {
	case *array.Null:
		return true, nil
	case *array.Dictionary:
		if a.IsNull(i) {
			return true, nil
		}
		j := a.GetValueIndex(i)
		d := a.Dictionary()
		if j < 0 || j >= d.Len() {
			return false, fmt.Errorf("dictionary element %d has index %d, outside its dictionary of %d values", i, j, d.Len())
		}
		return logicallyNull(d, j)
	case array.Union:
		if err := unionBuffers(a); err != nil {
			return false, err
		}
		child, j, err := unionSlot(a, i)
		if err != nil {
			return false, err
		}
		return logicallyNull(child, j)
	case *array.RunEndEncoded:
		ends, err := runEnds(a.RunEndsArr())
		if err != nil {
			return false, err
		}
		pos := int64(a.Data().Offset()) + int64(i)
		j := sort.Search(ends.len(), func(j int) bool { return ends.at(j) > pos })
		if j >= ends.len() || j >= a.Values().Len() {
			return false, fmt.Errorf("run-end encoded array: no run holds element %d", pos)
		}
		return logicallyNull(a.Values(), j)
	case array.ExtensionArray:
		return logicallyNull(a.Storage(), i)
	}
	if i < 0 || i >= arr.Len() {
		return false, fmt.Errorf("element %d of an array of %d (%s)", i, arr.Len(), arr.DataType())
	}
	if arr.NullN() == 0 {
		return false, nil
	}
	data := arr.Data()
	bits := bufBytes(data, 0)
	pos := int64(data.Offset()) + int64(i)
	if int64(len(bits)) <= pos/8 {
		return false, fmt.Errorf("array of type %s has %d nulls but a validity bitmap of %d bytes", arr.DataType(), arr.NullN(), len(bits))
	}
	return !bitutil.BitIsSet(bits, int(pos)), nil
}
