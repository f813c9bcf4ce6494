// Package gpuagg is the facade of arrowagg's library: the names its users
// know, kept in one package, for code in the other packages.
//
//   - engine: Engine, its options, Request, Accumulator, Result and
//     Finalize, Residency, the plan of each column (ColumnPlan), partial
//     states as Arrow records. New code can import it directly.
//   - agg: the aggregate set and names (Agg, Sum, ..., ParseAggs) and the
//     partial state (State, Int192).
//   - backend: the backend interfaces (Backend, GPUBackend, Locator,
//     ResidentGPU, DeviceColumn), the GPU registry (RegisterGPU,
//     GPUBuiltIn) and ErrNoGPU; backend/cpu the CPU backend (CPU,
//     MorselSize); backend/cuda the CUDA one (build tag cuda).
//   - planner: calibration, the per-column decision, and GPUCalibrator.
//
// Every name here is an alias of, or a thin wrapper around, the one in those
// packages: values of both are the same.
//
// The package exists once per Arrow Go version, the same code over each
// version's types: github.com/arrowagg/arrowagg/gpuagg for arrow-go v17, and
// github.com/arrowagg/arrowagg/arrow18/gpuagg (module
// github.com/arrowagg/arrowagg/arrow18) for arrow-go v18, generated from
// the v17 one by scripts/gen-arrow18.sh. Both run on the same core, which
// imports no Arrow version, and their partial states merge.
package gpuagg

import (
	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/backend/cpu"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/planner"
)

// The engine (package engine).
type (
	Engine         = engine.Engine
	Option         = engine.Option
	Device         = engine.Device
	Request        = engine.Request
	Accumulator    = engine.Accumulator
	Result         = engine.Result
	ColumnPlan     = engine.ColumnPlan
	Source         = engine.Source
	Residency      = engine.Residency
	ResidencyStats = engine.ResidencyStats
	Resident       = engine.Resident
)

// The device policies (engine's).
const (
	DeviceAuto = engine.DeviceAuto
	DeviceCPU  = engine.DeviceCPU
	DeviceGPU  = engine.DeviceGPU
)

// The sources of a ColumnPlan (engine's).
const (
	SourceNone  = engine.SourceNone
	SourceArrow = engine.SourceArrow
	SourcePages = engine.SourcePages
	SourceStats = engine.SourceStats
)

// Errors (engine's and backend's).
var (
	ErrUnknownColumn   = engine.ErrUnknownColumn
	ErrResidencyClosed = engine.ErrResidencyClosed
	ErrNoGPU           = backend.ErrNoGPU
)

// StatesSchema is the schema of Accumulator.StatesRecord (engine's).
var StatesSchema = engine.StatesSchema

// The engine's constructor and options.
var (
	New                = engine.New
	WithAllocator      = engine.WithAllocator
	WithThreads        = engine.WithThreads
	WithDevice         = engine.WithDevice
	WithGPU            = engine.WithGPU
	WithGPUMemoryLimit = engine.WithGPUMemoryLimit
	WithMinSplitBytes  = engine.WithMinSplitBytes
	WithCalibration    = engine.WithCalibration
	ParseDevice        = engine.ParseDevice
	Finalize           = engine.Finalize
)

// The backends (package backend).
type (
	Backend       = backend.Backend
	GPUBackend    = backend.GPUBackend
	GPUConfig     = backend.GPUConfig
	Locator       = backend.Locator
	OrderedGPU    = backend.OrderedGPU
	ResidentGPU   = backend.ResidentGPU
	DeviceColumn  = backend.DeviceColumn
	GPUCalibrator = planner.GPUCalibrator
	// CPU is the pure Go backend (backend/cpu).
	CPU = cpu.CPU
)

// MorselSize is the number of elements of one unit of CPU work (backend/cpu).
const MorselSize = cpu.MorselSize

// The GPU registry (backend's).
var (
	RegisterGPU = backend.RegisterGPU
	GPUBuiltIn  = backend.GPUBuiltIn
)

// The aggregate state and the aggregate set (package agg).
type (
	// State is the partial aggregate of one column (agg.State).
	State = agg.State
	// Int192 is the exact 192-bit integer of sums (agg.Int192).
	Int192 = agg.Int192
	// Agg is a set of aggregates (agg.Set).
	Agg = agg.Set
)

// The aggregates (agg's).
const (
	Sum       = agg.Sum
	Min       = agg.Min
	Max       = agg.Max
	Count     = agg.Count
	NullCount = agg.NullCount
	Mean      = agg.Mean
	First     = agg.First
	Last      = agg.Last
	ArgMin    = agg.ArgMin
	ArgMax    = agg.ArgMax
	// The statistics asked for by name: the sample standard deviation and
	// variance (ddof 1) and the HyperLogLog estimate of distinct values.
	Stddev         = agg.Stddev
	Variance       = agg.Variance
	ApproxDistinct = agg.ApproxDistinct

	// AllAggs is the default set: every unordered aggregate.
	AllAggs = agg.Default
	// OrderedAggs are the aggregates that depend on row order.
	OrderedAggs = agg.Ordered
)

// NewState returns the empty state of a family (agg.New, without the ordered
// aggregates).
func NewState(f column.Family) State { return agg.New(f, 0) }

// ParseAggs parses a comma-separated list of aggregate names (agg.Parse).
func ParseAggs(s string) (Agg, error) { return agg.Parse(s) }

// Int192From returns x as an Int192.
func Int192From(x int64) Int192 { return agg.Int192From(x) }

// Int192FromUint returns x as an Int192.
func Int192FromUint(x uint64) Int192 { return agg.Int192FromUint(x) }

// Int192From128 returns the 128-bit two's-complement value hi:lo as an Int192.
func Int192From128(lo uint64, hi int64) Int192 { return agg.Int192From128(lo, hi) }
