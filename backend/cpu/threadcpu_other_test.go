//go:build !linux

package cpu

import "time"

// threadCPU: unknown here (see threadcpu_linux_test.go).
func threadCPU() (time.Duration, bool) { return 0, false }
