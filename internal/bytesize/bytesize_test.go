package bytesize

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestParse: every unit, fractions, spaces and case; and clear errors for
// what is not a size or does not fit in an int64.
func TestParse(t *testing.T) {
	good := map[string]int64{
		"0":                   0,
		"1000000":             1000000,
		"512MiB":              512 << 20,
		"512 MiB":             512 << 20,
		"8GiB":                8 << 30,
		"8gib":                8 << 30,
		" 8G ":                8 << 30,
		"8Gi":                 8 << 30,
		"1.5G":                3 << 29,
		"0.5KiB":              512,
		"2.0001B":             2,
		"64K":                 64 << 10,
		"4kB":                 4000,
		"3MB":                 3000000,
		"2GB":                 2000000000,
		"1TiB":                1 << 40,
		"1tb":                 1e12,
		"8388607TiB":          8388607 << 40,
		"123b":                123,
		"4611686018427387904": 1 << 62,
	}
	for in, want := range good {
		got, err := Parse(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
	bad := map[string]string{
		"":                     `invalid size ""`,
		"GiB":                  `invalid size "GiB"`,
		"-1":                   `invalid size "-1"`,
		"8XB":                  `invalid size "8XB"`,
		"8 G B":                `invalid size "8 G B"`,
		"1.2.3G":               `invalid size "1.2.3G"`,
		".":                    `invalid size "."`,
		"1e9":                  `invalid size "1e9"`,
		"8EiB":                 `invalid size "8EiB"`,
		"8388608TiB":           `size "8388608TiB" is too large`,
		"9223372036854775808":  `size "9223372036854775808" is too large`,
		"99999999999999999999": `size "99999999999999999999" is too large`,
		"8388608.5TiB":         `size "8388608.5TiB" is too large`,
	}
	for in, want := range bad {
		_, err := Parse(in)
		if assert.Error(t, err, in) {
			assert.Contains(t, err.Error(), want)
		}
	}
}

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 512: "512 B", 1 << 10: "1.0 KiB", 768 << 20: "768.0 MiB", 3 << 29: "1.5 GiB", 1 << 40: "1.0 TiB", -(2 << 30): "-2.0 GiB"} {
		assert.Equal(t, want, Format(n), n)
	}
}
