// Package planner decides, per column, where arrowagg aggregates it: on the
// CPU, on the GPU, or split between both, from measured costs rather than a
// fixed threshold.
//
// The map of the package:
//
//   - Column is what the engine knows of a column: its kind, length, bytes
//     read, and its Location (ordinary host memory, pinned host memory or
//     GPU memory).
//   - Calibration is the machine: host-to-device bandwidths, the GPU's read
//     bandwidth, the latency of a launch plus reading its result back, and
//     the CPU's fused-pass throughput by goroutine count (calibration.go).
//     Defaults gives conservative figures for a CPU-only host until a
//     measurement exists; Load and Save keep a measured one in the user's
//     cache directory (CachePath), versioned by Version. MorselValues and
//     FewWorkers name the CPU backend's units the figures are measured in.
//   - Plan takes the columns, a Calibration and Options (a forced Backend
//     through Force, the CPU's goroutines, the smallest column worth
//     splitting, see SplitFrom) and returns one Decision per column: the
//     Backend (CPU, GPU or Split, with the GPU's share), the estimated time
//     of each choice, and a reason, so that an explain output can show its
//     work (plan.go).
//
// Who calls it: package gpuagg's engine plans every request with it and
// reports the decisions (arrowagg --explain); the CUDA backend gpuagg/cuda
// measures the GPU's figures of the Calibration on first use.
//
// The package is pure Go: it is tested without a GPU, and the calibration's
// GPU figures come from whoever can measure them (the CUDA backend), or from
// the caller.
package planner
