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
//   - plan.go: Column, Decision, Options, Plan (one decision per column) and
//     the reasons.
//   - batch.go: ColumnOf (what a view tells) and PlanViews (a batch, asking
//     the GPU backend's Locator where the columns that matter live).
//   - calibration.go: Calibration, its estimates (CPUTime, CPUCertainBytes,
//     CPUWherever), Defaults and the cache (CachePath, Load, Save).
//   - measure.go: Calibrate (the cached calibration or a fresh one),
//     MeasureCPU (the CPU backend timed on this host) and GPUCalibrator, which
//     a GPU backend implements to fill in its figures.
//   - contest.go: Contest, the choice for resident columns whose two
//     estimates are too close to trust, made by measuring both backends on
//     the column itself; DeviceEstimate.
//
// The package is tested without a GPU: the GPU figures come from whoever can
// measure them (the CUDA backend), or from the caller.
package planner
