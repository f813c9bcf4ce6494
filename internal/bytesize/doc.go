// Package bytesize reads sizes in bytes as people write them on command
// lines ("8GiB", "512MiB", "1.5G", "1000000"): one parser, Parse, for the
// arrowagg command (--gpu-memory) and the benchmark data generators of the
// bench module (bench/internal/gen), so that both accept the same forms.
//
// Units are case-insensitive: B, binary KiB, MiB, GiB, TiB (K, M, G, T
// alike) and decimal kB, MB, GB, TB. A fraction of a byte is dropped;
// negative sizes, unknown units and sizes beyond int64 are errors.
package bytesize
