// Package engine is the Arrow Go v17 front end of the engine: it resolves
// the requested columns of v17 schemas, turns record batches into column
// views (package column/arrow17), hands them to the version-free engine
// (package engine/core: planning, backends, residency) and turns the
// partial states into v17 scalars.
//
//   - engine.go: Engine (the core's, with the v17 entry points) and its
//     options, Request, Accumulator (Add, Merge, Results) and the
//     Aggregate* entry points.
//   - residency.go: Residency and Resident for v17 record batches, and
//     Accumulator.AddResident (the core's residency underneath).
//   - result.go: Result and Finalize, a state as Arrow scalars.
//   - states_record.go: partial states as an Arrow record (StatesSchema,
//     Accumulator.StatesRecord, MergeRecord).
//
// The backends are package backend's interfaces (the CPU backend of
// backend/cpu always, a GPU backend from the registry when one is built in);
// the decisions are package planner's; the states are package agg's.
// Package gpuagg re-exports these names for existing users.
//
// The package exists once per Arrow Go version, the same code over each
// version's types: github.com/arrowagg/arrowagg/engine for arrow-go v17, and
// github.com/arrowagg/arrowagg/arrow18/engine (module
// github.com/arrowagg/arrowagg/arrow18) for arrow-go v18, generated from
// the v17 one by scripts/gen-arrow18.sh. Both run on the same core, which
// imports no Arrow version, and their partial states merge.
package engine
