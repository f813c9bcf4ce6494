package arrow17

import (
	"fmt"
	"reflect"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// NarrowDecimalType is Arrow's decimal32 or decimal64 (format 1.5, Arrow
// 18 and later): a decimal of precision Precision and scale Scale whose
// unscaled values are 4- or 8-byte little-endian two's complement integers.
// arrow-go v17 has no type of its own for them, so they travel as an
// extension type over fixed_size_binary(4) or (8): the very same buffers.
// Its kinds are Decimal32 and Decimal64; its results are those of
// decimal128(Precision, Scale) (Decimal128).
//
// It is not registered with arrow-go: it is made by the sources that read
// these types from files (package dataset), not from extension metadata.
type NarrowDecimalType struct {
	arrow.ExtensionBase
	BitWidth  int32 // 32 or 64
	Precision int32
	Scale     int32
}

// NewNarrowDecimalType returns decimal32(precision, scale) (bitWidth 32) or
// decimal64 (bitWidth 64); it fails for any other width.
func NewNarrowDecimalType(bitWidth, precision, scale int32) (*NarrowDecimalType, error) {
	if bitWidth != 32 && bitWidth != 64 {
		return nil, fmt.Errorf("decimal of bit width %d is not decimal32 nor decimal64", bitWidth)
	}
	return &NarrowDecimalType{
		ExtensionBase: arrow.ExtensionBase{Storage: &arrow.FixedSizeBinaryType{ByteWidth: int(bitWidth / 8)}},
		BitWidth:      bitWidth, Precision: precision, Scale: scale,
	}, nil
}

// Decimal128 is the decimal128 of the same precision and scale: the type
// of the results (min, max, first, last) of a column of t.
func (t *NarrowDecimalType) Decimal128() *arrow.Decimal128Type {
	return &arrow.Decimal128Type{Precision: t.Precision, Scale: t.Scale}
}

// String is Arrow's name of the type: "decimal32(9, 2)".
func (t *NarrowDecimalType) String() string {
	return fmt.Sprintf("decimal%d(%d, %d)", t.BitWidth, t.Precision, t.Scale)
}

// Fingerprint tells types of other widths, precisions and scales apart.
func (t *NarrowDecimalType) Fingerprint() string { return "arrowagg." + t.String() }

// ExtensionName implements arrow.ExtensionType.
func (t *NarrowDecimalType) ExtensionName() string {
	return fmt.Sprintf("arrowagg.decimal%d", t.BitWidth)
}

// Serialize implements arrow.ExtensionType: precision and scale.
func (t *NarrowDecimalType) Serialize() string { return fmt.Sprintf("%d,%d", t.Precision, t.Scale) }

// Deserialize implements arrow.ExtensionType.
func (t *NarrowDecimalType) Deserialize(storage arrow.DataType, data string) (arrow.ExtensionType, error) {
	fsb, ok := storage.(*arrow.FixedSizeBinaryType)
	if !ok || (fsb.ByteWidth != 4 && fsb.ByteWidth != 8) {
		return nil, fmt.Errorf("%s over storage %s", t.ExtensionName(), storage)
	}
	var p, s int32
	if _, err := fmt.Sscanf(data, "%d,%d", &p, &s); err != nil {
		return nil, fmt.Errorf("%s metadata %q: %w", t.ExtensionName(), data, err)
	}
	return NewNarrowDecimalType(int32(8*fsb.ByteWidth), p, s)
}

// ExtensionEquals implements arrow.ExtensionType.
func (t *NarrowDecimalType) ExtensionEquals(o arrow.ExtensionType) bool {
	u, ok := o.(*NarrowDecimalType)
	return ok && u.BitWidth == t.BitWidth && u.Precision == t.Precision && u.Scale == t.Scale
}

// ArrayType implements arrow.ExtensionType.
func (t *NarrowDecimalType) ArrayType() reflect.Type { return reflect.TypeOf(NarrowDecimalArray{}) }

// NarrowDecimalArray is an array of NarrowDecimalType: its storage is a
// fixed_size_binary array of the values.
type NarrowDecimalArray struct {
	array.ExtensionArrayBase
}
