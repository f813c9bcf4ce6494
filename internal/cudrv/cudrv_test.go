//go:build cuda

package cudrv

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// The driver's library is opened at run time: a library that is missing, or
// that lacks the driver's calls, is an error naming it, and binds nothing.
// These run on any host, with or without a GPU or the driver.

func TestLoadMissingLibrary(t *testing.T) {
	err := load("libarrowagg-no-such-driver.so.1")
	require.Error(t, err)
	require.Contains(t, err.Error(), "loading the CUDA driver")
	require.Contains(t, err.Error(), "libarrowagg-no-such-driver.so.1")
}

func TestLoadLibraryWithoutTheDriverCalls(t *testing.T) {
	err := load("libc.so.6")
	require.Error(t, err)
	require.Contains(t, err.Error(), "libc.so.6 has no cuInit")
}

// A failed load leaves the calls as they were: unbound before the driver was
// opened (each then answers CUDA_ERROR_NOT_INITIALIZED), bound after.
func TestFailedLoadBindsNothing(t *testing.T) {
	before := bound()
	require.Error(t, load("libc.so.6"))
	require.Equal(t, before, bound())
	if openErr := open(); openErr != nil {
		// No driver on this host: the calls are unbound, and a call's
		// error says the driver is not initialized.
		require.False(t, bound())
		require.Contains(t, openErr.Error(), "loading the CUDA driver")
		_, err := NumDevices()
		require.True(t, errors.Is(err, openErr), "%v", err)
		require.Zero(t, Version())
	} else {
		require.True(t, bound())
	}
}
