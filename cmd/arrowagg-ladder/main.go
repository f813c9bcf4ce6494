package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// prog is the command's name in its messages.
const prog = "arrowagg-ladder"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
