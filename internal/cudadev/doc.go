// Package cudadev is what the CUDA packages of arrowagg share: the
// description of a GPU, the kernels' launch limits, and the one OS thread
// that every driver call of a context runs on.
//
// The map of the package:
//
//   - Info describes a GPU (name, compute capability, multiprocessors,
//     memory, the driver's CUDA version); Describe checks that an ordinal
//     exists and fills one in.
//   - Kernel finds a kernel in a loaded module and the most blocks of a
//     given size worth launching at once (its occupancy times the
//     multiprocessors): the grid limit of a grid-stride kernel.
//   - Thread is a goroutine locked to its OS thread, on which a context is
//     made current: Start runs the context's setup there, Do runs each driver
//     call there (a panic comes back as an error), Close tears down.
//
// Who calls it: the CUDA backend (backend/cuda) and the reduction ladder
// (package ladder, the command arrowagg-ladder). The block sizes they pass
// to Kernel come from package kernels (kernels.AggBlockThreads,
// kernels.LadderBlock).
//
// The package needs the cuda build tag (internal/cudrv, the CUDA
// headers and libcuda); without it, it is empty.
package cudadev
