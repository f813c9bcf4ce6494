//go:build !noasm

package staging

import "golang.org/x/sys/cpu"

var haveFills = cpu.X86.HasAVX2

//go:noescape
func copyCached(dst, src *byte, n int)

//go:noescape
func copyStream(dst, src *byte, n int)

//go:noescape
func copyDemote(dst, src *byte, n int)
