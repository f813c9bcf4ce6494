//go:build emu

// Package emugpu runs the CUDA source of the kernels (kernels/*.cu and
// kernels/*.cuh) on the CPU, through the emulation of the CUDA built-ins in
// kernels/emu/emu.h, so that Go tests can check the device code's logic on
// machines without a GPU. It is built only with the emu build tag
// (go test -tags emu ./internal/emugpu) and is no part of the library.
//
// Layout: one C++ file per kernel family (unsnap.cc: the snappy
// decompressor of kernels/unsnap.cuh; pq.cc: the Parquet page kernels of
// kernels/pq.cuh, launched as the CUDA backend launches them, and the
// Backend that gives the GPU page route to tests), each including emu.h and then the
// CUDA source it runs, defining the test kernels and an extern "C" entry
// point that launches them with emu_launch; one Go file per family wraps
// that entry point (unsnap.go) and emugpu.go holds the cgo flags they share.
// Every .cc file includes readcheck.h after emu.h and before any kernel
// source: the hook that checks each read of a kernel's input against its
// bounds, the same in every file (the kernels' inline functions must be).
// Every file outside this folder that the C++ files include has a symbolic
// link here named *.h (kernels_unsnap.h, kernels_emu_emu.h): the go command
// hashes only a package's own files to decide whether to rebuild it, and the
// links make an edit of a kernel rebuild this package (TestIncludesHashed
// checks that none is missing).
// The emulator runs every CUDA thread as a fiber of its own, one launch at
// a time, on the calling OS thread: keep inputs to what a test needs.
package emugpu
