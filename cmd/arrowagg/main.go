package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"golang.org/x/term"

	"github.com/arrowagg/arrowagg/internal/startup"
)

func main() {
	startup.Trace("main", time.Now(), nil)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, a second one ends the process at once.
		<-ctx.Done()
		stop()
	}()
	stopProfile := startProfile()
	code := run(ctx, os.Args[1:], env{
		stdin:          os.Stdin,
		stdout:         os.Stdout,
		stderr:         os.Stderr,
		stdinTerminal:  term.IsTerminal(int(os.Stdin.Fd())),
		stderrTerminal: term.IsTerminal(int(os.Stderr.Fd())),
		mem:            memory.DefaultAllocator,
	})
	stop()
	stopProfile()
	os.Exit(code)
}

// startProfile writes a CPU profile of the run to the file named by
// $ARROWAGG_CPUPROFILE, when it is set (for `go tool pprof`); the function
// it returns ends the profile.
func startProfile() func() {
	path := os.Getenv("ARROWAGG_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "arrowagg: ARROWAGG_CPUPROFILE:", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
