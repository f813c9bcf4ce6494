// Package ladder runs the reduction ladder on a GPU: every kernel of the
// classic optimization sequence of a parallel sum (Mark Harris's
// "Optimizing Parallel Reduction in CUDA", kernels 1 to 7), the modern forms
// up to arrowagg's own design, an order-preserving reduction for
// non-commutative operators and the multi-pass "window" cascade of the C++
// AMP reduction sample. The kernels and their descriptions are in
// kernels/ladder.cu (package kernels embeds their PTX and fatbin); the command
// arrowagg-ladder (cmd/arrowagg-ladder) prints the table through Main.
//
// The map of the package:
//
//   - Variant is one rung: its ID and name, the operator its result is
//     checked against, and how it enqueues one reduction (a chain of
//     launches over block partials for kernels 1 to 8, one or two launches
//     for the others). Variants lists them in order (variants.go).
//   - Device is a GPU with its own context, on an OS thread of its own
//     (internal/cudadev), the ladder's fatbin loaded (its entry points listed
//     from the PTX) and every entry point's
//     grid limit known (Open, Info, Close; device.go).
//   - Config (N, repetitions, warm-up, seed, device, whether to run the
//     unsafe variant 5u), Run, and the Report it returns, one Row per
//     variant with its time, GB/s, share of the copy bandwidth and speedup;
//     WriteTable prints it as Markdown and Wrong lists the variants whose
//     result was wrong. Main is the command line over them (run.go).
//   - The operators (ops.go): the int64 sum of every variant, and for kernel
//     12 a 2x2 integer matrix product mod 2^32 and first/last/count, each
//     with its sequential host fold as the reference.
//
// Each variant sums N random int32 values into an int64 and is checked
// against the exact sum computed on the host; kernel 12 is also run with the
// two non-commutative operators, checked against the sequential fold. Times
// are the median of R repetitions measured with CUDA events, beside a
// device-to-device copy of the same input measured in the same run. Block
// sizes, the window of kernel 13 and the largest operator state are the
// shared constants of package kernels (kernels.LadderBlock, ...).
//
// The package needs the cuda build tag and a GPU: it creates its own context
// through the driver binding internal/cudrv on an OS thread of its own and
// loads the fatbin of package kernels (machine code for sm_70 to sm_90, PTX
// that the driver compiles for other GPUs). Without the tag it is empty.
package ladder
