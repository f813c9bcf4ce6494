package dataset

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
)

// limitEnv, when set, is the address space in bytes the test binary may
// take: `make fuzz` sets it, and the fuzzing engine's workers, which run
// this binary too, inherit it. An input that makes a reader allocate past
// it (a decompression or dictionary bomb) then ends the worker out of
// memory, which the engine reports with the input, instead of passing on a
// machine with the memory to spare.
const limitEnv = "ARROWAGG_TEST_LIMIT_AS"

func TestMain(m *testing.M) {
	if v := os.Getenv(limitEnv); v != "" {
		var lim syscall.Rlimit
		n, err := strconv.ParseUint(v, 10, 64)
		if err == nil {
			err = syscall.Getrlimit(syscall.RLIMIT_AS, &lim)
		}
		if err == nil {
			lim.Cur = n
			err = syscall.Setrlimit(syscall.RLIMIT_AS, &lim)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s=%s: %v\n", limitEnv, v, err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}
