package arrow17

import (
	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowagg/arrowagg/column"
)

// nativeKind is the storage kind of a type that this Arrow version has
// natively and that the rest of KindOf does not name: in Arrow Go v18, the
// native decimal32 and decimal64 (arrow18/column/arrow18/native_v18.go, the
// hand-written counterpart of this file). Arrow Go v17 has none: its
// decimal32 and decimal64 are NarrowDecimalType.
func nativeKind(arrow.DataType) (column.Kind, bool) { return column.Unsupported, false }
