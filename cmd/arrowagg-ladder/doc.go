// Command arrowagg-ladder runs the reduction ladder on a GPU: it runs,
// verifies and times every variant of the classic optimization sequence of a
// parallel sum (Mark Harris's kernels 1 to 7), the modern forms up to
// arrowagg's own last-block design, an order-preserving reduction and a
// multi-pass cascade, and prints one Markdown table of time, GB/s and the
// share of the device-to-device copy bandwidth.
//
//	arrowagg-ladder [--n N] [--reps R] [--warmup W] [--unsafe] [--seed S] [--device D]
//
// It is a teaching and measuring tool, separate from the arrowagg command: the
// kernels are in kernels/ladder.cu, the host side (launches, checks, the
// table) in package ladder, which this command only wraps with signal
// handling. scripts/gpu-build.sh builds it into gpu-bin/ for a GPU host
// without Go and scripts/ladder-run.sh runs it there.
//
// The ladder needs the CUDA backend: build with -tags cuda (the CUDA toolkit's
// headers and libcuda). Without the tag the command still builds, and exits
// with status 2 and a message saying so.
//
// Exit status: 0 on success, 1 on a failure or a wrong result, 2 on bad usage
// (or a build without cuda), 130 when interrupted.
package main
