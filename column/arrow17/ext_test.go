package arrow17

import (
	"reflect"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// testExtension is an extension type over any storage, for the tests.
type testExtension struct{ arrow.ExtensionBase }

func extensionOf(storage arrow.DataType) *testExtension {
	return &testExtension{arrow.ExtensionBase{Storage: storage}}
}

func (*testExtension) ArrayType() reflect.Type { return reflect.TypeOf(testExtensionArray{}) }
func (*testExtension) ExtensionName() string   { return "arrowagg.test" }
func (*testExtension) Serialize() string       { return "" }

func (e *testExtension) ExtensionEquals(o arrow.ExtensionType) bool {
	return o.ExtensionName() == e.ExtensionName() && arrow.TypeEqual(o.StorageType(), e.Storage)
}

func (*testExtension) Deserialize(storage arrow.DataType, _ string) (arrow.ExtensionType, error) {
	return extensionOf(storage), nil
}

type testExtensionArray struct{ array.ExtensionArrayBase }
