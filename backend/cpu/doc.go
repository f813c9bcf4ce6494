// Package cpu is the pure Go backend: each view is cut into morsels of
// MorselSize elements, morsels are aggregated by up to CPU.Threads
// goroutines, and the morsel states of a view are merged in order, so that
// every result is the same for every thread count.
//
//   - cpu.go: CPU (backend.Backend), its scheduler, and Compute, Commit and
//     Done, the two halves of Update for a caller that must run the CPU
//     beside another backend and change no state unless both succeed.
//   - morsel.go: MorselSize; one morsel of a view folded into a state by
//     the accumulator of its kind, dictionaries through their indices;
//     Opaque values (the counts family) are counted, never read. States
//     that track only counts read validity only (cpu.go, countsOnly).
//   - update.go: the accumulators of each family (signed, unsigned, float
//     with compensated lanes, decimal, bool, bytes) and their dense and
//     sparse loops.
//   - widen.go: the narrow kinds (float16, fixed_size_binary, decimal32,
//     decimal64), whose morsels are widened into a worker's scratch and
//     folded by the loops of their family's wide kind (float64,
//     large_binary, decimal128): the same states as columns of those kinds.
//   - bits.go: validity bitmaps, visited by words.
//   - ordered.go: first, last, arg_min and arg_max of a morsel.
//   - stats.go: the statistics asked for by name — the sums of squares of
//     stddev and variance and the HyperLogLog sketch of approx_distinct —
//     folded in each morsel's visit after the other aggregates, while the
//     morsel is in cache (SIMD kernels for the squares and the hashes of
//     64- and 32-bit values, which raise only the registers a hash can
//     raise once the sketch is seeded); nothing of it runs unless a state
//     asks.
//   - simd_amd64.go, simd_amd64.s, simd_other.go: the AVX2 and AVX-512
//     kernels of the dense loops and of the statistics, chosen at start
//     (build tag noasm: none).
package cpu
