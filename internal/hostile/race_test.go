//go:build race

package hostile

func init() { brotliPageBytes = 256 << 20 }
