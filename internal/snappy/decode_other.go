//go:build !amd64 || purego

package snappy

// haveFast reports whether an assembly fast loop exists on this platform.
// Elsewhere decode's careful loop does all the work.
const haveFast = false

// decodeFast is never called when haveFast is false.
func decodeFast(dst, src []byte, d, s int) (dd, ss int) { return d, s }
