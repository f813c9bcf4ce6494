// Package planner decides, per column, where arrowagg aggregates it: on the
// CPU, on the GPU, or split between both, from measured costs rather than a
// fixed threshold.
//
// The inputs are what the engine knows of each column (its kind, length,
// bytes read, and where its memory lives: ordinary host memory, pinned host
// memory or GPU memory) and a Calibration of the machine: host-to-device
// bandwidths, the GPU's read bandwidth, the latency of a launch plus reading
// its result back, and the CPU's fused-pass throughput by goroutine count. The
// planner estimates the time of each choice and returns the fastest, with the
// estimates and a reason, so that an explain output can show its work.
//
// The package is pure Go: it is tested without a GPU, and the calibration's
// GPU figures come from whoever can measure them (the CUDA backend), or from
// the caller.
package planner
