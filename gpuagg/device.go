package gpuagg

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/arrowagg/arrowagg/column"
)

// Device selects where columns are aggregated.
type Device uint8

// The device policies.
const (
	// DeviceAuto uses the GPU backend, when one is built in and a GPU is
	// present, for the columns it handles, and the CPU otherwise.
	DeviceAuto Device = iota
	// DeviceCPU aggregates everything on the CPU.
	DeviceCPU
	// DeviceGPU requires the GPU backend; strings and binaries still go to the
	// CPU, which the GPU does not handle.
	DeviceGPU
)

func (d Device) String() string {
	switch d {
	case DeviceCPU:
		return "cpu"
	case DeviceGPU:
		return "gpu"
	}
	return "auto"
}

// ParseDevice parses "auto", "cpu" or "gpu".
func ParseDevice(s string) (Device, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto", "":
		return DeviceAuto, nil
	case "cpu":
		return DeviceCPU, nil
	case "gpu":
		return DeviceGPU, nil
	}
	return DeviceAuto, fmt.Errorf("unknown device %q (want auto, cpu or gpu)", s)
}

// GPUBackend is a Backend that runs on a GPU. Handles reports which views it
// aggregates (fixed-width kinds; not strings); Close frees the device.
type GPUBackend interface {
	Backend
	Handles(v *column.View) bool
	Close() error
}

// ErrNoGPU is returned when DeviceGPU is asked for and no GPU backend is
// available (a build without the cuda tag, or no GPU visible).
var ErrNoGPU = errors.New("no GPU backend")

// GPUConfig is what an Engine asks of the GPU backend it opens.
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

func openGPU(cfg GPUConfig) (GPUBackend, error) {
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
