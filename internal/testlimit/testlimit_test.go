package testlimit

import (
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// The limit a test binary is given is the one it runs under: a child run
// of this test with Env set reads its own address-space limit back.
func TestLimitApplied(t *testing.T) {
	if os.Getenv("TESTLIMIT_CHILD") != "" {
		require.NoError(t, limit(os.Getenv(Env)))
		var lim syscall.Rlimit
		require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_AS, &lim))
		require.Equal(t, uint64(3<<30), uint64(lim.Cur))
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestLimitApplied$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TESTLIMIT_CHILD=1", Env+"=3221225472")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "PASS")
	require.Error(t, limit("not a number"))
}
