package budget

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// physicalMemory is the machine's memory, or the control group's limit when
// less; 0 when unknown.
func physicalMemory() int64 {
	var si syscall.Sysinfo_t
	var n int64
	if syscall.Sysinfo(&si) == nil {
		n = int64(si.Totalram) * int64(si.Unit)
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil { // cgroup v2
		if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && v > 0 && (n == 0 || v < n) {
			n = v
		}
	}
	return n
}
