//go:build cuda

package dataset

import (
	"testing"

	_ "github.com/arrowagg/arrowagg/backend/cuda" // the GPU backend the engine opens
)

// TestGPUPagesCUDA is checkGPUPages on the GPU (the GPU script runs it;
// without a GPU the engine under --device gpu fails to open).
func TestGPUPagesCUDA(t *testing.T) {
	checkGPUPages(t, nil)
}
