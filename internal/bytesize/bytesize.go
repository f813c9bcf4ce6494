package bytesize

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// byteUnits are the units Parse knows, lower-case: binary (KiB,
// and K alike, ...) and decimal (kB, ...).
var byteUnits = map[string]uint64{
	"": 1, "b": 1,
	"k": 1 << 10, "ki": 1 << 10, "kib": 1 << 10, "kb": 1e3,
	"m": 1 << 20, "mi": 1 << 20, "mib": 1 << 20, "mb": 1e6,
	"g": 1 << 30, "gi": 1 << 30, "gib": 1 << 30, "gb": 1e9,
	"t": 1 << 40, "ti": 1 << 40, "tib": 1 << 40, "tb": 1e12,
}

// Parse reads a number of bytes: a non-negative number, then
// optionally a unit, case-insensitive: B, binary KiB, MiB, GiB, TiB (K, M,
// G, T alike) or decimal kB, MB, GB, TB. "8GiB", "512MiB", "1.5G" and
// "1000000" are sizes; a fraction of a byte is dropped.
func Parse(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(t)
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := byteUnits[unit]
	if num == "" || !ok {
		return 0, fmt.Errorf("invalid size %q (want bytes, or a number and a unit: 8GiB, 512MiB, 1.5G)", s)
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseUint(num, 10, 64)
		hi, lo := bits.Mul64(n, mult)
		if err != nil || hi != 0 || lo > math.MaxInt64 {
			return 0, fmt.Errorf("size %q is too large", s)
		}
		return int64(lo), nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q (want bytes, or a number and a unit: 8GiB, 512MiB, 1.5G)", s)
	}
	if f *= float64(mult); f >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(f), nil
}

// Format writes n bytes for people: in GiB, MiB or KiB with one decimal
// (1.5 GiB, 768.0 MiB) from a KiB up, else in bytes (512 B).
func Format(n int64) string {
	units := []struct {
		size int64
		name string
	}{{1 << 40, "TiB"}, {1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}}
	for _, u := range units {
		if n >= u.size || -n >= u.size {
			return strconv.FormatFloat(float64(n)/float64(u.size), 'f', 1, 64) + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " B"
}
