//go:build !cuda

package main

import (
	"context"
	"fmt"
	"io"
)

// run is the command in a build without the CUDA backend: the ladder runs
// only on a GPU, so it says how to build it and returns 2.
func run(_ context.Context, _ []string, _, stderr io.Writer) int {
	fmt.Fprintf(stderr, "%s: the ladder needs the cuda build (make ladder, or go build -tags cuda ./cmd/%s)\n", prog, prog)
	return 2
}
