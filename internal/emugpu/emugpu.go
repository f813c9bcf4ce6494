//go:build emu

package emugpu

// The flags of kernels/emu/run.sh, which builds the emulation harnesses.

// #cgo CXXFLAGS: -std=c++20 -O1 -pthread -Wall -Wno-volatile -Wno-unused-function -Wno-unknown-pragmas
// #cgo LDFLAGS: -pthread
import "C"
