package arrow18

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/arrowagg/arrowagg/column"
)

// nativeKind is the storage kind of a type that this Arrow version has
// natively and that the rest of KindOf does not name: Arrow Go v18's
// decimal32 and decimal64 (arrow.Decimal32Type, arrow.Decimal64Type), whose
// values are 4- and 8-byte little-endian unscaled integers in the array's
// second buffer, as those of NarrowDecimalType: the kinds Decimal32 and
// Decimal64. (This file is written by hand: the v17 front end's
// column/arrow17/native_v17.go, which has none, is not generated here.)
func nativeKind(dt arrow.DataType) (column.Kind, bool) {
	switch dt.ID() {
	case arrow.DECIMAL32:
		return column.Decimal32, true
	case arrow.DECIMAL64:
		return column.Decimal64, true
	}
	return column.Unsupported, false
}
