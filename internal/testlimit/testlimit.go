// Package testlimit caps a test binary's address space when
// ARROWAGG_TEST_LIMIT_AS is set: `make fuzz` sets it, and the fuzzing
// engine's workers, which run the test binary too, inherit it. An input
// that makes a reader allocate past it (a decompression or dictionary bomb)
// then ends the worker out of memory, which the engine reports with the
// input, instead of passing on a machine with the memory to spare. The
// packages with fuzz targets call Main from their TestMain.
package testlimit

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
)

// Env is the variable that holds the limit, in bytes.
const Env = "ARROWAGG_TEST_LIMIT_AS"

// Main applies the limit Env sets, if any, then runs the tests and exits
// with their status; a limit it cannot apply ends the binary with status 2.
func Main(m *testing.M) {
	if v := os.Getenv(Env); v != "" {
		if err := limit(v); err != nil {
			fmt.Fprintf(os.Stderr, "%s=%s: %v\n", Env, v, err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}

func limit(v string) error {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return err
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		return err
	}
	lim.Cur = n
	return syscall.Setrlimit(syscall.RLIMIT_AS, &lim)
}
