package column

import (
	"fmt"
	"unsafe"
)

// Type is the logical type of a view's values as its source names it: an
// Arrow DataType of whichever Arrow Go version made the view, or a source's
// own. The backends read only its name, for messages; what they aggregate is
// the Kind (and Width).
type Type interface {
	String() string
}

// TypeName is a Type that is only a name, for views a program makes of its
// own memory ("int64").
type TypeName string

func (t TypeName) String() string { return string(t) }

// View is the physical layout of one contiguous Arrow column (one chunk): what
// a backend needs to aggregate it, whatever Arrow implementation (or file
// reader) owns its memory.
//
// Element i of the view (0 <= i < Len) is value Offset+i of Values and validity
// bit ValidityOffset+i of Validity. A nil Validity means every element is valid.
// For dictionary arrays Values holds the indices (IndexKind) and Dict the
// dictionary's values; Kind is then the kind of the dictionary values. An
// Opaque view has no Values (but a dictionary's indices): only its validity
// is read.
type View struct {
	Type Type // logical type of the values (value type for dictionaries)
	Kind Kind // storage kind of the values
	// Width is the byte width of a FixedSizeBinary view's values (0 for
	// the other kinds, whose width is their Kind's).
	Width     int
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
		n = int64(BytesForBits(int64(v.Len)))
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
		n += int64(BytesForBits(int64(v.Len)))
	}
	return n
}

// ElemWidth is the size in bytes of one of the view's values: its kind's
// Width, or for FixedSizeBinary the view's Width.
func (v *View) ElemWidth() int {
	if v.Kind != FixedSizeBinary {
		return v.Kind.Width()
	}
	return v.Width
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
	return v.Validity == nil || BitIsSet(v.Validity, v.ValidityOffset+i)
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

// Check validates that the buffers are large enough for the declared offset
// and length, so that no backend reads out of bounds on malformed input.
// Whoever makes a view of memory from outside checks it.
func (v *View) Check() error {
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
		if err := need("validity", len(v.Validity), BytesForBits(int64(v.ValidityOffset)+int64(v.Len))); err != nil {
			return err
		}
	}
	switch {
	case v.Dict != nil:
		return need("index", len(v.Values), end*int64(v.IndexKind.Width()))
	case v.Kind == Opaque: // no values read
		return nil
	case v.Kind == Bool:
		return need("values", len(v.Values), BytesForBits(end))
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

// Sub is elements [lo, hi) of v as a view of its own: Row advanced by lo,
// its nulls counted again (and no validity where none is null). A
// dictionary view keeps its whole dictionary.
func (v *View) Sub(lo, hi int) View {
	s := *v
	s.Offset += lo
	s.ValidityOffset += lo
	s.Row += int64(lo)
	s.Len = hi - lo
	if s.Validity != nil {
		s.NullCount = s.Len - CountSetBits(s.Validity, s.ValidityOffset, s.Len)
		if s.NullCount == 0 {
			s.Validity = nil
		}
	}
	return s
}
