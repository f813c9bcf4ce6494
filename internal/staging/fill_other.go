//go:build !amd64 || noasm

package staging

var haveFills = false

func copyCached(dst, src *byte, n int) { panic("staging: no vector fills on this platform") }
func copyStream(dst, src *byte, n int) { panic("staging: no vector fills on this platform") }
func copyDemote(dst, src *byte, n int) { panic("staging: no vector fills on this platform") }
