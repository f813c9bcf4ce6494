// Command arrowagg aggregates the columns of Parquet files, Arrow IPC files
// and Arrow IPC streams (count, null_count, sum, min, max, mean) on the CPU
// or, in a build with the CUDA backend, on a GPU, and prints them as a table,
// JSON or CSV.
//
//	arrowagg [flags] PATH...
//
// Exit status: 0 on success, 1 on an internal error, 2 on bad usage or bad
// input, 130 when interrupted.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"golang.org/x/term"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, a second one ends the process at once.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], env{
		stdin:          os.Stdin,
		stdout:         os.Stdout,
		stderr:         os.Stderr,
		stdinTerminal:  term.IsTerminal(int(os.Stdin.Fd())),
		stderrTerminal: term.IsTerminal(int(os.Stderr.Fd())),
		mem:            memory.DefaultAllocator,
	})
	stop()
	os.Exit(code)
}
