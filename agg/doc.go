// Package agg is the one definition of the aggregates: the set of aggregate
// functions and their names (Set, Parse), the partial state of one column
// (State) with its life cycle — init (New), update (the constructors of
// partial states that the backends' loops, Parquet statistics and null runs
// produce), merge (State.Merge) and finalize (State.Finalize: every
// aggregate as a neutral Go value, Final) — the exact 192-bit integer of sums
// (Int192), the exact 320-bit sums of squares of stddev and variance
// (Uint320), the HyperLogLog sketch of approx_distinct and its fixed hashes
// (Sketch, sketch.go) and the state's serialization (MarshalBinary,
// UnmarshalBinary).
//
// It imports no Arrow version and no backend: the CPU and CUDA backends, the
// Parquet and IPC sources and the front ends all build on it, and nothing
// outside it writes a State's fields (a test of this package checks the whole
// module).
package agg
