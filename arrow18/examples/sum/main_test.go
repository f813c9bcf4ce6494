package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNoArrow17: a program of Arrow Go v18 that uses arrowagg depends on no
// package of Arrow Go v17, in the default and the cuda build (go list
// -deps: the packages the build compiles).
func TestNoArrow17(t *testing.T) {
	for _, tags := range []string{"", "cuda"} {
		args := []string{"list", "-e", "-deps", "-f", "{{.ImportPath}}"}
		if tags != "" {
			args = append(args, "-tags", tags)
		}
		out, err := exec.Command("go", append(args, ".", "github.com/arrowagg/arrowagg/backend/cuda")...).Output()
		require.NoError(t, err)
		deps := strings.Fields(string(out))
		require.Contains(t, deps, "github.com/apache/arrow-go/v18/arrow")
		require.Contains(t, deps, "github.com/arrowagg/arrowagg/engine/core")
		for _, d := range deps {
			require.False(t, strings.HasPrefix(d, "github.com/apache/arrow/go/v17"), "tags %q: %s", tags, d)
		}
	}
}

// TestRun: the program runs and prints its results.
func TestRun(t *testing.T) {
	out, err := exec.Command("go", "run", ".").CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, "price count 4 sum 3.5 mean 0.875\nmin_max {min:float64 = -1e+16, max:float64 = 1e+16}\n", string(out))
}
