package core

import (
	"fmt"
	"strings"
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
