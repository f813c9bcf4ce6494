//go:build !linux

package budget

// physicalMemory is unknown here: the default budget is DefaultMax.
func physicalMemory() int64 { return 0 }
