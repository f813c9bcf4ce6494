// Package core is the engine without an Arrow version: it folds column views
// (package column) into partial states (package agg), asking the planner
// where each goes and running the plan on the backends. The front end of
// each Arrow Go version (package engine for v17) turns that version's
// arrays, records, tables and readers into views and the states into its
// scalars; everything between is here, once.
//
//   - engine.go: Engine and its options (New, WithThreads, WithDevice,
//     WithGPU, WithAllocator, ...); UpdateView, the allocation-free core
//     under every entry point, and PlanView.
//   - device.go: the device policy (DeviceAuto, DeviceCPU, DeviceGPU).
//   - plan.go: the engine's calibration (measured once by the planner),
//     ColumnPlan (how a column was aggregated: Source, Backend, Location,
//     amounts and reason; Add is its one bookkeeping method), the batch plan
//     under the device policy, and execute, which runs a batch's GPU and CPU
//     shares at once and commits both only when both succeeded.
//   - accumulator.go: Column (a column as a front end describes it), Part
//     (its views in one batch) and Accumulator (Add, Merge, MergeStates,
//     States, Plan).
//   - residency.go: Residency and Resident, columns kept in device memory
//     within a budget (residentColumn is one column chunk's record; a front
//     end adds a Resident's batches as views and releases their memory in
//     its OnFree), and Accumulator.AddResident.
//
// It imports no Arrow Go module (internal/layout's test checks it).
package core
