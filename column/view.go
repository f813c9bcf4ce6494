package column

import (
	"fmt"
	"sort"
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
// dictionary's values; Kind is then the kind of the dictionary values. An
// Opaque view has no Values (but a dictionary's indices): only its validity
// is read.
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
		n = int64(v.Len) * int64(v.ElemWidth())
	}
	if v.Validity != nil {
		n += int64(bitutil.BytesForBits(int64(v.Len)))
	}
	return n
}

// ElemWidth is the size in bytes of one of the view's values: its kind's
// Width, or for FixedSizeBinary its type's byte width (0 where the type is
// not a fixed_size_binary nor over one).
func (v *View) ElemWidth() int {
	if v.Kind != FixedSizeBinary {
		return v.Kind.Width()
	}
	return FixedSizeWidth(v.Type)
}

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
func ViewOf(arr arrow.Array) (View, error) {
	switch a := arr.(type) {
	case *array.RunEndEncoded:
		return runEndView(a)
	case *array.Null:
		v := View{Type: a.DataType(), Kind: Opaque, Len: a.Len(), NullCount: a.Len()}
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
	switch k {
	case Opaque:
		return v, v.check()
	case Binary, LargeBinary:
		v.Offsets = bufBytes(data, 1)
		v.Values = bufBytes(data, 2)
	default:
		v.Values = bufBytes(data, 1)
	}
	return v, v.check()
}

// extensionView is the Opaque view of an extension array: its storage's
// validity. That of a NarrowDecimalType array is its storage's values, of
// kind Decimal32 or Decimal64.
func extensionView(a array.ExtensionArray) (View, error) {
	k, err := KindOf(a.DataType())
	if err != nil {
		return View{}, err
	}
	v, err := ViewOf(a.Storage())
	if err != nil {
		return View{}, err
	}
	if k == Decimal32 || k == Decimal64 {
		if v.Kind != FixedSizeBinary || v.ElemWidth() != k.Width() {
			return View{}, fmt.Errorf("%s array over storage %s", a.DataType(), a.Storage().DataType())
		}
		v.Type, v.Kind = a.DataType(), k
		return v, v.check()
	}
	// (arrow-go makes no extension arrays over dictionaries.)
	v.Type, v.Kind, v.Values, v.Offsets = a.DataType(), Opaque, nil, nil
	return v, nil
}

// structView is the Opaque view of a struct array's own validity (not its
// fields').
func structView(a *array.Struct) (View, error) {
	data := a.Data()
	v := View{Type: a.DataType(), Kind: Opaque, Len: a.Len(), NullCount: a.NullN(), Offset: data.Offset(), ValidityOffset: data.Offset()}
	if v.NullCount > 0 {
		if v.Validity = bufBytes(data, 0); v.Validity == nil {
			return View{}, fmt.Errorf("array of type %s has %d nulls but no validity bitmap", v.Type, v.NullCount)
		}
	}
	return v, v.check()
}

// runEndView is the Opaque view of a run-end encoded array: an element is
// null where the value of its run is (a null, or a valid dictionary index
// to a null). The validity bitmap is made here, a bit per element.
func runEndView(a *array.RunEndEncoded) (View, error) {
	v := View{Type: a.DataType(), Kind: Opaque, Len: a.Len()}
	if v.Len == 0 {
		return v, nil
	}
	ends, err := runEnds(a.RunEndsArr())
	if err != nil {
		return View{}, err
	}
	vals := a.Values()
	if ends.len() > vals.Len() {
		return View{}, fmt.Errorf("run-end encoded array of %d runs but %d values", ends.len(), vals.Len())
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
			return View{}, fmt.Errorf("run-end encoded array: run end %d after %d", ends.at(j), pos+off)
		}
		end = min(end, n)
		null, err := logicallyNull(vals, j)
		if err != nil {
			return View{}, fmt.Errorf("run-end encoded array: value %d: %w", j, err)
		}
		if null {
			v.NullCount += int(end - pos)
		} else {
			bitutil.SetBitsTo(bits, pos, end-pos, true)
		}
		pos = end
	}
	if pos < n {
		return View{}, fmt.Errorf("run-end encoded array: the runs end at %d, the array at %d", pos+off, n+off)
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
	case v.Kind == Opaque: // no values read
		return nil
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
	case v.Kind == FixedSizeBinary && v.ElemWidth() <= 0:
		return fmt.Errorf("fixed-size binary view of type %s has no byte width", v.Type)
	default:
		return need("values", len(v.Values), end*int64(v.ElemWidth()))
	}
}
