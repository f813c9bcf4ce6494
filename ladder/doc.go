//go:build cuda

// Package ladder runs the reduction ladder on a GPU: every kernel of the
// classic optimization sequence of a parallel sum (Mark Harris's
// "Optimizing Parallel Reduction in CUDA", kernels 1 to 7), the modern forms
// up to arrowagg's own design, an order-preserving reduction for
// non-commutative operators and the multi-pass "window" cascade of the C++
// AMP reduction sample. The kernels and their descriptions are in
// kernels/ladder.cu; the command arrowagg-ladder prints the table.
//
// Each variant sums N random int32 values into an int64 and is checked
// against the exact sum computed on the host; kernel 12 is also run with two
// non-commutative operators (a 2x2 integer matrix product mod 2^32 and
// first/last/count), checked against the sequential fold. Times are the
// median of R repetitions measured with CUDA events, beside a device-to-device
// copy of the same input measured in the same run.
//
// The package needs the cuda build tag and a GPU: it creates its own context
// with gorgonia.org/cu on an OS thread of its own and loads the PTX of
// package kernels, which the driver compiles for the GPU.
package ladder
