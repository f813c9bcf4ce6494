//go:build !noasm

package staging

import "golang.org/x/sys/cpu"

var haveDemote = cpu.X86.HasAVX2

//go:noescape
func copyDemote(dst, src *byte, n int)
