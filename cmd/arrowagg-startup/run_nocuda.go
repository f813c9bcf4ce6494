//go:build !cuda

package main

import (
	"errors"
	"io"
)

func measure(io.Writer, int) error {
	return errors.New("this build has no CUDA support (build with -tags cuda)")
}
