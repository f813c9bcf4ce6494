//go:build cuda

package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/arrowagg/arrowagg/ladder"
)

// runLadder is `arrowagg ladder [--n N] [--reps R] [--unsafe] [--seed S]
// [--device D]`: it runs, verifies and times every variant of the reduction
// ladder on the GPU and prints the table (package ladder). It returns the
// exit status: 0, 1 on a failure or a wrong result, 2 on bad usage, 130 when
// interrupted.
func runLadder(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return ladder.Main(ctx, "arrowagg ladder", args, stdout, stderr)
}
