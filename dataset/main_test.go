package dataset

import (
	"testing"

	"github.com/arrowagg/arrowagg/internal/testlimit"
)

// TestMain caps the address space when `make fuzz` asks (testlimit).
func TestMain(m *testing.M) { testlimit.Main(m) }
