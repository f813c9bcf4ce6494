package column

import (
	"fmt"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
)

// View is the physical layout of one contiguous Arrow column (one chunk): what
// a backend needs to aggregate it without going through arrow.Array accessors.
//
// Element i of the view (0 <= i < Len) is value Offset+i of Values and validity
// bit ValidityOffset+i of Validity. A nil Validity means every element is valid.
// For dictionary arrays Values holds the indices (IndexKind) and Dict the
// dictionary's values; Kind is then the kind of the dictionary values.
type View struct {
	Type      arrow.DataType // logical type of the values (value type for dictionaries)
	Kind      Kind           // storage kind of the values
	Len       int
	NullCount int

	Values []byte // the whole values buffer (bitmap for Bool), from element 0
	Offset int    // element offset of element 0 into Values (and Offsets for Binary)

	// Offsets is the offsets buffer of Binary / LargeBinary views, from element 0;
	// Values is then the character data.
	Offsets []byte

	Validity       []byte // nil when there are no nulls
	ValidityOffset int    // bit offset of element 0 into Validity

	// Dictionary arrays: the indices are Values (of IndexKind); Dict is the
	// dictionary, whose own nulls count as nulls of the column.
	IndexKind Kind
	Dict      *View

	// Row is the row number of element 0 in the whole stream the column is
	// part of (0 for a lone array): the ordered aggregates (first, last,
	// arg_min, arg_max) report rows.
	Row int64
}

// IsDict reports whether the view is a dictionary array.
func (v *View) IsDict() bool { return v.Dict != nil }

// ByteSize is the number of bytes a backend reads for the view: values and
// validity (for dictionaries the indices, validity and the whole dictionary).
func (v *View) ByteSize() int64 {
	var n int64
	switch {
	case v.Dict != nil:
		n = int64(v.Len) * int64(v.IndexKind.Width())
		n += v.Dict.ByteSize()
	case v.Kind == Bool:
		n = int64(bitutil.BytesForBits(int64(v.Len)))
	case v.Kind == Binary || v.Kind == LargeBinary:
		w := 4
		if v.Kind == LargeBinary {
			w = 8
		}
		n = int64(v.Len+1) * int64(w)
		if v.Len > 0 {
			n += v.binaryOffset(v.Len) - v.binaryOffset(0)
		}
	default:
		n = int64(v.Len) * int64(v.Kind.Width())
	}
	if v.Validity != nil {
		n += int64(bitutil.BytesForBits(int64(v.Len)))
	}
	return n
}

func (v *View) binaryOffset(i int) int64 {
	if v.Kind == LargeBinary {
		return Slice[int64](v.Offsets)[v.Offset+i]
	}
	return int64(Slice[int32](v.Offsets)[v.Offset+i])
}

// Valid reports whether element i is non-null in the view's own validity bitmap
// (for dictionaries the dictionary's nulls are checked separately).
func (v *View) Valid(i int) bool {
	return v.Validity == nil || bitutil.BitIsSet(v.Validity, v.ValidityOffset+i)
}

// Number is the set of Go types that fixed-width column values are stored as.
type Number interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// Slice reinterprets a buffer as a slice of T (no copy). Arrow's own buffers
// are 64-byte aligned; views over other memory (Parquet page buffers) may not
// be aligned to T, which the platforms this runs on (amd64, arm64) load
// without fault, and the SIMD loops load unaligned anyway.
func Slice[T Number](b []byte) []T {
	if len(b) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(zero)))
}

// Values returns elements [0, v.Len) of a fixed-width view as []T; T must match
// the view's storage width.
func Values[T Number](v *View) []T {
	all := Slice[T](v.Values)
	return all[v.Offset : v.Offset+v.Len : v.Offset+v.Len]
}

// ViewOf returns the view of a flat (non-nested) array. It fails for types no
// backend aggregates. The view borrows the array's buffers: keep the array
// alive (retained) while the view is in use.
func ViewOf(arr arrow.Array) (View, error) {
	data := arr.Data()
	dt := arr.DataType()
	v := View{Type: dt, Len: arr.Len(), NullCount: arr.NullN(), Offset: data.Offset(), ValidityOffset: data.Offset()}
	if v.NullCount > 0 {
		if buf := data.Buffers()[0]; buf != nil {
			v.Validity = buf.Bytes()
		}
	}
	if v.NullCount > 0 && v.Validity == nil {
		return View{}, fmt.Errorf("array of type %s has %d nulls but no validity bitmap", dt, v.NullCount)
	}
	if d, ok := dt.(*arrow.DictionaryType); ok {
		ik, err := IndexKind(d)
		if err != nil {
			return View{}, err
		}
		dictArr, ok := arr.(*array.Dictionary)
		if !ok {
			return View{}, fmt.Errorf("array of type %s is not a dictionary array", dt)
		}
		dv, err := ViewOf(dictArr.Dictionary())
		if err != nil {
			return View{}, fmt.Errorf("dictionary values: %w", err)
		}
		v.Type, v.Kind, v.IndexKind, v.Dict = d.ValueType, dv.Kind, ik, &dv
		v.Values = bufBytes(data, 1)
		return v, v.check()
	}
	k, err := KindOf(dt)
	if err != nil {
		return View{}, err
	}
	v.Kind = k
	if k == Binary || k == LargeBinary {
		v.Offsets = bufBytes(data, 1)
		v.Values = bufBytes(data, 2)
	} else {
		v.Values = bufBytes(data, 1)
	}
	return v, v.check()
}

func bufBytes(data arrow.ArrayData, i int) []byte {
	bufs := data.Buffers()
	if i >= len(bufs) || bufs[i] == nil {
		return nil
	}
	return bufs[i].Bytes()
}

// check validates that the buffers are large enough for the declared offset and
// length, so that no backend reads out of bounds on malformed input.
func (v *View) check() error {
	if v.Len == 0 {
		return nil
	}
	end := int64(v.Offset) + int64(v.Len)
	need := func(what string, have int, bytes int64) error {
		if int64(have) < bytes {
			return fmt.Errorf("%s buffer of %d bytes is too short for %d elements at offset %d (%s)", what, have, v.Len, v.Offset, v.Type)
		}
		return nil
	}
	if v.Validity != nil {
		if err := need("validity", len(v.Validity), bitutil.BytesForBits(int64(v.ValidityOffset)+int64(v.Len))); err != nil {
			return err
		}
	}
	switch {
	case v.Dict != nil:
		return need("index", len(v.Values), end*int64(v.IndexKind.Width()))
	case v.Kind == Bool:
		return need("values", len(v.Values), bitutil.BytesForBits(end))
	case v.Kind == Binary || v.Kind == LargeBinary:
		w := int64(4)
		if v.Kind == LargeBinary {
			w = 8
		}
		if err := need("offsets", len(v.Offsets), (end+1)*w); err != nil {
			return err
		}
		lo, hi := v.binaryOffset(0), v.binaryOffset(v.Len)
		if lo < 0 || hi < lo || hi > int64(len(v.Values)) {
			return fmt.Errorf("binary offsets [%d, %d] outside the %d-byte data buffer (%s)", lo, hi, len(v.Values), v.Type)
		}
		return nil
	default:
		return need("values", len(v.Values), end*int64(v.Kind.Width()))
	}
}
