//go:build emu

package dataset

import (
	"testing"

	"github.com/arrowagg/arrowagg/internal/emugpu"
)

// TestGPUPagesEmulated is checkGPUPages with the page kernels run on the
// CPU (internal/emugpu), in batches small enough that a column takes
// several launches.
func TestGPUPagesEmulated(t *testing.T) {
	checkGPUPages(t, &emugpu.Backend{Batch: 96 << 10})
}
