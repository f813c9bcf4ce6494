// Package backend is what arrowagg's aggregation backends are to the engine:
// interfaces, and the registry through which a GPU backend built into the
// binary is found.
//
//   - Backend folds column views into partial states (agg.State); the CPU
//     backend (backend/cpu) is always there.
//   - GPUBackend is a Backend on a GPU; RegisterGPU, GPUBuiltIn and OpenGPU
//     are the registry of the one a build carries (backend/cuda, build tag
//     cuda), GPUConfig what an engine asks of it, ErrNoGPU the error when
//     there is none.
//   - The optional abilities of a GPU backend: Locator (where a view's memory
//     lives), OrderedGPU (the ordered aggregates), StatsGPU (the statistics
//     asked for by name), ResidentGPU (columns kept in device memory as
//     DeviceColumns), Prober (a device set up lazily).
//
// The package holds no implementation and imports neither Arrow's arrays nor
// the planner: column, agg and this package are the bottom of the import
// graph that backends, the planner and the engine build on.
package backend

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
)

// Backend folds column views into partial states. The CPU backend is always
// there; the CUDA backend (build tag cuda) implements the same interface.
type Backend interface {
	// Name identifies the backend in plans and errors ("cpu", "gpu").
	Name() string
	// Update folds views[i] into states[i] for every i. States arrive
	// initialized (agg.New) or holding earlier partials of the same column.
	Update(ctx context.Context, views []*column.View, states []*agg.State) error
}

// GPUBackend is a Backend that runs on a GPU. Handles reports which views it
// aggregates (fixed-width kinds; not strings); Close frees the device.
type GPUBackend interface {
	Backend
	Handles(v *column.View) bool
	Close() error
}

// Location is where a column's memory lives.
type Location uint8

// The locations.
const (
	Host   Location = iota // ordinary (pageable) host memory, e.g. Go's heap
	Pinned                 // page-locked host memory
	Device                 // already in GPU memory
)

func (l Location) String() string {
	switch l {
	case Pinned:
		return "pinned"
	case Device:
		return "device"
	}
	return "host"
}

// Locator is implemented by GPU backends that hold columns in device memory:
// it tells the planner where a view's data lives.
type Locator interface {
	Locate(v *column.View) Location
}

// OrderedGPU is implemented by GPU backends that compute the ordered
// aggregates (States with Ordered set); without it such columns stay on the
// CPU.
type OrderedGPU interface {
	SupportsOrdered() bool
}

// StatsGPU is implemented by GPU backends that compute some of the
// statistics asked for by name (agg.Moments, agg.ApproxDistinct): whether
// they compute, for a view of kind k, those of tracks (a state's Tracks).
// Without it, states that track any of them stay on the CPU.
type StatsGPU interface {
	SupportsStats(k column.Kind, tracks agg.Set) bool
}

// PageGPU is implemented by GPU backends that decode Parquet pages
// themselves (column.Pages): the chunks go up as stored and the values are
// decoded and aggregated on the device.
type PageGPU interface {
	// HandlesPages reports whether UpdatePages takes pages of kind k for
	// a state that tracks tracks.
	HandlesPages(k column.Kind, tracks agg.Set) bool
	// UpdatePages folds p into s; s is left untouched when it fails. When
	// the device has too little memory for even the smallest batch of
	// p's chunks, the error matches ErrDeviceMemory: the caller may read
	// the pages another way.
	UpdatePages(ctx context.Context, p *column.Pages, s *agg.State) error
	// Warm opens the device now (its driver, context and kernels), so
	// that the caller's host work overlaps it.
	Warm() error
}

// DeviceColumn is a column chunk held in device memory by a ResidentGPU.
type DeviceColumn interface {
	// Update folds the column into s, like Backend.Update for the view it
	// was uploaded from: with the ordered aggregates when s.Ordered is set,
	// the column's first element being row row. s is left untouched when it
	// fails.
	Update(ctx context.Context, s *agg.State, row int64) error
	// Free returns the column's device memory; later calls do nothing.
	Free()
}

// ResidentGPU is implemented by GPU backends that can keep columns in device
// memory, uploaded once and aggregated many times without a host transfer.
// The engine's Residency manages such columns within a memory budget.
type ResidentGPU interface {
	GPUBackend
	// UploadView copies the buffers of v (a view the backend Handles) to
	// device memory. The column does not refer to v's memory afterwards.
	UploadView(ctx context.Context, v *column.View) (DeviceColumn, error)
	// DeviceBytes is the device memory that UploadView(v) takes, in bytes.
	DeviceBytes(v *column.View) int64
}

// GroupGPU is implemented by GPU backends that group rows on the device by
// one key of a dense domain: integers whose range is at most GroupDomain
// values, or a dictionary's indices (few keys: per-block state tables in
// shared memory, merged by the last block; many: one table in device
// memory).
type GroupGPU interface {
	ResidentGPU
	// GroupDomain is the most key values (groups, the null key aside) one
	// call takes over rows rows of values of kind val (0: none).
	GroupDomain(val column.Kind, rows int) int
	// HandlesGroup reports whether GroupDevice takes keys of kind key and
	// values of kind val, for the aggregates of set.
	HandlesGroup(key, val column.Kind, set agg.Set) bool
	// GroupDevice folds the rows of device columns vals (of key's rows; only
	// those whose selection is true when sel, a Bool column, is not nil)
	// into groups: result c holds the states of vals[c] in groups+1
	// groups, group g the rows whose key is kmin+g (kmin: the key's
	// smallest value, its int64 bits for a signed kind; 0 for indices) and
	// group groups the rows of a null key. A group's rows are its state's
	// Count plus NullCount. A valid key outside the domain is an error.
	GroupDevice(ctx context.Context, key DeviceColumn, kmin uint64, groups int, sel DeviceColumn, vals []DeviceColumn, set agg.Set) ([]*agg.Groups, error)
}

// Prober is implemented by GPU backends that set their device up lazily, on
// the first call that needs it, so that opening one (OpenGPU) costs nothing:
// Probe initializes the driver and checks that the device exists, without
// more (no context, no kernels), and gives the same answer every time. The
// engine probes when it must know: at once for DeviceGPU (to fail early),
// before calibrating for DeviceAuto (a failure plans on the CPU alone).
type Prober interface {
	Probe() error
}

// NameHinter is implemented by GPU backends that can name their device
// without initializing its driver (from what the operating system records of
// it), so that the engine can find a cached calibration before it pays the
// driver's initialization (about 100 ms), and plan on the CPU without ever
// paying it. ok is false when the name is not known for certain (several
// models, a device selection in the environment, no such records).
type NameHinter interface {
	NameHint() (name string, ok bool)
}

// DeviceOpener is implemented by GPU backends that open their device
// lazily: DeviceOpen reports, without opening it, whether the device is
// open already, so that the planner no longer counts its start (the
// driver, the context, the kernels) against work that would use it.
type DeviceOpener interface {
	DeviceOpen() bool
}

// ErrNoGPU is returned when a GPU is required and no GPU backend is
// available (a build without the cuda tag, or no GPU visible).
var ErrNoGPU = errors.New("no GPU backend")

// ErrDeviceMemory is matched (errors.Is) by the errors of a GPU backend's
// calls that found too little free device memory (or too little under the
// backend's memory limit) for the work at its smallest size: no fault of
// the data or of the device, so the caller may do the work on the CPU.
var ErrDeviceMemory = errors.New("too little device memory")

// GPUConfig is what an engine asks of the GPU backend it opens.
type GPUConfig struct {
	// MemoryLimit caps the device memory the backend allocates, in bytes (0:
	// no cap beyond the device's). Columns larger than it stream through in
	// chunks that fit.
	MemoryLimit int64
}

var (
	gpuMu      sync.Mutex
	gpuFactory func(GPUConfig) (GPUBackend, error)
)

// RegisterGPU installs the constructor of the GPU backend. The CUDA package
// (build tag cuda) calls it from its init; the default build has none.
func RegisterGPU(f func(GPUConfig) (GPUBackend, error)) {
	gpuMu.Lock()
	defer gpuMu.Unlock()
	gpuFactory = f
}

// GPUBuiltIn reports whether a GPU backend is compiled into this binary.
func GPUBuiltIn() bool {
	gpuMu.Lock()
	defer gpuMu.Unlock()
	return gpuFactory != nil
}

// OpenGPU opens the registered GPU backend with cfg. It fails, with an error
// wrapping ErrNoGPU, when none is built in or it cannot be opened.
func OpenGPU(cfg GPUConfig) (GPUBackend, error) {
	gpuMu.Lock()
	f := gpuFactory
	gpuMu.Unlock()
	if f == nil {
		return nil, fmt.Errorf("%w: this build has no CUDA support (build with -tags cuda)", ErrNoGPU)
	}
	b, err := f(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoGPU, err)
	}
	return b, nil
}
