//go:build !amd64 || noasm

package staging

var haveDemote = false

func copyDemote(dst, src *byte, n int) { panic("staging: no demoted fill on this platform") }
