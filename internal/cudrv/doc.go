// Package cudrv is arrowagg's binding of the CUDA driver API: the calls that
// the CUDA backend (backend/cuda), internal/cudadev and the reduction ladder
// make, and no others, over cgo, cuda.h and libcuda. It needs the build tag
// cuda; without it, the package is empty.
//
// It loads and initializes the driver lazily: the first call that needs the
// driver (Init, through a sync.Once) opens libcuda.so.1 (dlopen) and binds
// each call to it, then runs cuInit; nothing happens when the program
// starts. A failure (no driver library, a library without a call this
// package binds, no GPU, no device node) is an error that every later call
// returns, not an exit. A binary built with the cuda tag therefore starts as
// fast as one without (linking libcuda cost every process 1–2 ms of the
// dynamic loader's time), and runs on the CPU on hosts without a GPU or
// without the driver installed. The toolkit's cuda.h is needed to build, not
// its libraries.
//
// What is bound, by the driver's names:
//
//   - initialization and devices: cuInit, cuDriverGetVersion,
//     cuDeviceGetCount, cuDeviceGet, cuDeviceGetName, cuDeviceGetAttribute
//     (multiprocessor count, compute capability), cuDeviceTotalMem;
//   - contexts: cuDevicePrimaryCtxRetain and Release, cuCtxCreate and
//     Destroy, cuCtxSetCurrent, cuCtxSynchronize, cuMemGetInfo;
//   - streams and events: cuStreamCreate (default or non-blocking),
//     Destroy, Synchronize, WaitEvent; cuEventCreate (with or without
//     timing), Destroy, Record, Synchronize, Query, ElapsedTime;
//   - memory: cuMemAlloc, cuMemFree, cuMemHostAlloc (portable), cuMemFreeHost,
//     cuPointerGetAttribute (PinnedRange), cuMemsetD8 and D32 (and Async),
//     cuMemcpyHtoD, DtoH, DtoD (and Async);
//   - modules and kernels: cuModuleLoadData (PTX, cubin or fatbin),
//     cuModuleGetFunction, cuModuleUnload,
//     cuOccupancyMaxActiveBlocksPerMultiprocessor, cuLaunchKernel.
//
// The names follow gorgonia.org/cu, which the module used before, so that
// callers read the same: Device, Context, Stream, Event, Module, Function,
// DevicePtr, MakeStream, MakeEvent, LoadData, Function.Launch. Two things
// differ. Launch takes Params, each parameter appended with its own size
// (U32, U64, Ptr) and packed as the kernel's signature lays them out, one
// buffer passed by value to the driver, where gorgonia.org/cu copied 8 bytes
// per parameter into memory it allocated for each launch. And errors are
// Error values (CUresult codes: OutOfMemory, LaunchFailed, IllegalAddress,
// NoDevice, ...), matched by errors.Is through any wrapping.
//
// Driver contexts are current per OS thread: callers make every call of a
// context on the thread it is current on (internal/cudadev's Thread).
package cudrv
