//go:build cuda

package main

import (
	"context"
	"io"

	"github.com/arrowagg/arrowagg/ladder"
)

// run is the whole command in the cuda build: the ladder's flags, run and
// table (ladder.Main). It returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return ladder.Main(ctx, prog, args, stdout, stderr)
}
