// Package planner decides, per column, where arrowagg aggregates it: on the
// CPU, on the GPU, or split between both, from measured costs rather than a
// fixed threshold.
//
// The map of the package:
//
//   - Column is what the engine knows of a column: its kind, length, bytes
//     read, and its Location (ordinary host memory, pinned host memory or
//     GPU memory; backend.Location). ColumnOf makes one from a column.View
//     (batch.go).
//   - Calibration is the machine: host-to-device bandwidths, the GPU's read
//     bandwidth, the latency of a launch plus reading its result back, and
//     the CPU's fused-pass throughput by goroutine count, with its estimates
//     (CPUTime, CPUCertainBytes, CPUWherever) (calibration.go), and the
//     Parquet page kernels' rates by PageClass (codec and encoding), which
//     with the page path's constants decide where a file's pages are
//     decoded, chunk by chunk (SplitPages, PagesOnGPU, PagesWorthAsking,
//     and PageStandIn before a calibration exists: pages.go). Defaults
//     gives conservative figures for a CPU-only host until a measurement
//     exists; Load and Save keep a measured one in the user's cache
//     directory (CachePath), versioned by Version. FewWorkers and the CPU
//     backend's cpu.MorselSize are the units the figures are measured in.
//   - Calibrate returns the cached calibration or measures a fresh one:
//     MeasureCPU times the CPU backend on this host, and a GPU backend that
//     is a GPUCalibrator fills in its figures (measure.go).
//   - Plan takes the columns, a Calibration and Options (a forced Backend
//     through Force, the CPU's goroutines, the smallest column worth
//     splitting, see SplitFrom) and returns one Decision per column: the
//     Backend (CPU, GPU or Split, with the GPU's share), the estimated time
//     of each choice, and a reason, so that an explain output can show its
//     work (plan.go). PlanViews plans a batch of views, asking the GPU
//     backend's Locator where the columns that matter live (batch.go).
//   - Contest is the choice for resident columns whose two estimates are too
//     close to trust (Calibration.Contested), made by measuring both backends
//     on the column itself; DeviceEstimate is the estimate of a resident
//     column (contest.go).
//
// Who calls it: the engine (package engine) plans every request with it and
// reports the decisions (arrowagg --explain); the CUDA backend
// (backend/cuda) measures the GPU's figures of the Calibration on first use.
// The package is tested without a GPU: the GPU figures come from whoever can
// measure them, or from the caller.
package planner
