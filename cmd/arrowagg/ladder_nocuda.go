//go:build !cuda

package main

import (
	"fmt"
	"io"
)

// runLadder is `arrowagg ladder` in a build without the CUDA backend: the
// ladder runs only on a GPU.
func runLadder(_ []string, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "arrowagg ladder: the ladder needs the cuda build (make cuda)")
	return 2
}
