package dataset

import (
	"fmt"
	"reflect"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// logicalType is the Arrow type of a Parquet column of a logical type
// arrow-go v17 does not know (GEOMETRY, GEOGRAPHY, the fields of a VARIANT,
// newer ones: pqfooter.go hides them from arrow-go): an extension type over
// the Arrow type of the column's physical type. Its kind is column.Opaque:
// the column is counted (count and null_count), its values, whose meaning
// arrowagg does not know, not read. It is not registered with arrow-go.
type logicalType struct {
	arrow.ExtensionBase
	name string // "GEOMETRY", or "logical type 17" for one without a name here
}

func newLogicalType(name string, storage arrow.DataType) *logicalType {
	return &logicalType{ExtensionBase: arrow.ExtensionBase{Storage: storage}, name: name}
}

// String names the logical type and the physical type's Arrow type:
// "GEOMETRY (binary)".
func (t *logicalType) String() string { return fmt.Sprintf("%s (%s)", t.name, t.Storage) }

// Fingerprint tells logical types and storages apart.
func (t *logicalType) Fingerprint() string {
	return "arrowagg.parquet." + t.name + "." + t.Storage.Fingerprint()
}

// ExtensionName implements arrow.ExtensionType.
func (t *logicalType) ExtensionName() string { return "arrowagg.parquet_logical_type" }

// Serialize implements arrow.ExtensionType: the logical type's name.
func (t *logicalType) Serialize() string { return t.name }

// Deserialize implements arrow.ExtensionType.
func (t *logicalType) Deserialize(storage arrow.DataType, data string) (arrow.ExtensionType, error) {
	return newLogicalType(data, storage), nil
}

// ExtensionEquals implements arrow.ExtensionType.
func (t *logicalType) ExtensionEquals(o arrow.ExtensionType) bool {
	u, ok := o.(*logicalType)
	return ok && u.name == t.name && arrow.TypeEqual(u.Storage, t.Storage)
}

// ArrayType implements arrow.ExtensionType.
func (t *logicalType) ArrayType() reflect.Type { return reflect.TypeOf(logicalArray{}) }

// logicalArray is an array of a logicalType: its storage is the array
// pqarrow decodes the physical values into.
type logicalArray struct {
	array.ExtensionArrayBase
}
