// Package engine aggregates Arrow data: it resolves the requested columns,
// asks the planner where each goes, runs the plan on the backends and turns
// the partial states into results.
//
//   - engine.go: Engine and its options (New, WithThreads, WithDevice,
//     WithGPU, ...), Request, Accumulator (Add, Merge, Results) and the
//     Aggregate* entry points; UpdateView, the allocation-free core.
//   - device.go: the device policy (DeviceAuto, DeviceCPU, DeviceGPU).
//   - plan.go: the engine's calibration (measured once by the planner),
//     ColumnPlan (how a column was aggregated: Source, Backend, Location,
//     amounts and reason; Add is its one bookkeeping method), the batch plan
//     under the device policy, and execute, which runs a batch's GPU and CPU
//     shares at once and commits both only when both succeeded.
//   - residency.go: Residency and Resident, columns kept in device memory
//     within a budget (residentColumn is one column chunk's record), and
//     Accumulator.AddResident.
//   - result.go: Result and Finalize, a state as Arrow scalars.
//   - states_record.go: partial states as an Arrow record (StatesSchema,
//     Accumulator.StatesRecord, MergeRecord).
//
// The backends are package backend's interfaces (the CPU backend of
// backend/cpu always, a GPU backend from the registry when one is built in);
// the decisions are package planner's; the states are package agg's.
// Package gpuagg re-exports these names for existing users.
package engine
