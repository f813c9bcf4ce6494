//go:build cuda

// Package cuda is the CUDA backend of arrowagg, built with the build tag cuda.
// Importing it (blank import) registers the backend with backend.RegisterGPU,
// so that engine.New with DeviceAuto or DeviceGPU aggregates the
// fixed-width columns on the GPU; strings, binaries and dictionaries stay on
// the CPU.
//
// It drives the GPU through internal/cudrv, the module's own binding of the
// CUDA driver API, from one goroutine locked to its OS thread, on the
// device's primary context. Nothing touches the driver when the program
// starts: a binary built with the cuda tag starts like one without, runs
// with --device cpu without initializing CUDA, and on a host without a GPU
// (with the driver's library installed) falls back to the CPU under
// DeviceAuto; only DeviceGPU fails, with an error wrapping backend.ErrNoGPU.
//
// # Start-up
//
// Open sets everything up at once. The backend that engine.New opens (the
// one registered with backend.RegisterGPU) is lazy, in two steps: Probe,
// Info and DeviceName initialize the driver (cuInit, about 100 ms on the
// H100 host) and describe the device, with no context; the first call that
// runs on the device (Update, Upload, CalibrateGPU, ...) starts the device
// thread, retains the primary context (about 125 ms there), loads the
// kernels and creates the streams, events and launch scratch. The engine
// probes at New for DeviceGPU, and under DeviceAuto only before its first
// calibration, which it skips while every column it could send to the GPU
// is at most planner.TinyBytes: a small input never touches the driver.
// ARROWAGG_TRACE_STARTUP=1 prints each of these steps' times to stderr
// (internal/startup); cmd/arrowagg-startup and scripts/startup-check.sh
// measure them on a GPU host.
//
// # Building
//
// It compiles against the CUDA driver API headers (cuda.h) and opens
// libcuda.so.1 at run time, when a plan first needs the GPU
// (internal/cudrv): on Debian, scripts/install-cuda-toolkit.sh installs them, then
// `go build -tags cuda ./...` needs no flags. Toolkits in /usr/local/cuda
// are found too. The binaries run on any driver from CUDA 11.8 up. The
// kernels are a fatbin (package kernels) with machine code for sm_70, sm_75,
// sm_80, sm_86, sm_89 and sm_90, which the driver loads as it is, and PTX for
// compute_60, which it JIT-compiles for other GPUs (Pascal, and newer than
// Hopper; 12.7 s on a cold driver cache for the H100, 13 ms warm, when the
// kernels were PTX alone).
//
// # Data path
//
// A column chunk in host memory is cut into chunks (WithChunkBytes, 64 MiB)
// that flow through WithStreams lanes (3): each lane has a stream and device
// buffers for values and validity. Ordinary (pageable) host memory goes
// through a page-locked staging ring (WithStaging, 32 pieces of 2 MiB;
// internal/staging schedules it): goroutines fill its slots, one per piece
// and several at once, and the DMA of each piece is issued as soon as it is
// full; a call's chunks are one stream of copies, so the next chunk's fills
// run while the last pieces of one are copied and its kernel runs. Buffers
// that are already page-locked (HostAllocator, or memory the caller
// registered) are copied by DMA directly, at the full host-to-device rate.
// Each chunk is one kernel launch whose state comes back as a few words; the
// host merges chunk states with agg.State.Merge in chunk order, so
// results do not depend on timing. Device memory comes from a caching pool
// (no cuMemAlloc per call); when even small chunks do not fit, Update warns
// and aggregates on the CPU.
//
// Staging reads and writes every byte once more than the DMA, and on the
// H100 host the copy engine, reading the slots while the fills run, bounds
// the ring (46–50 GB/s against 55 from page-locked memory alone). The fills
// therefore use vector stores and demote each line (CLDEMOTE) from the
// filling core's caches to the shared one, where the copy engine reads it
// without snooping a core (47.5 GB/s against 45.3 with Go's copy, round by
// round with a ring each), and cut validity bitmaps into pieces of at least
// 1 MiB (a piece costs a slot and a copy whatever its size). A 1 GiB column
// in Go memory aggregates at 45–50 GB/s end to end there (medians of runs),
// about the host's own 16-goroutine memcpy. Page-locking Go memory in place
// for each call (cuMemHostRegister) avoids the copy but measured 13–16
// GB/s: registering 1 GiB takes 34–46 ms (BENCHMARKS.md).
//
// The small columns of a call (each at most min(1 MiB, a quarter of a
// chunk), without the ordered aggregates) are not launched one by one: their
// spans are packed into a lane's staging buffer with a table of column
// descriptors and tiles, uploaded at once, and aggregated by one launch of
// arrowagg_multi, which runs the per-kind kernels' thread, warp and block
// layers tile by tile (the last tile of each column merges its partials in
// order); all their states come back in one copy (multi.go).
//
// Columns that stay on the device (Backend.Upload, DeviceColumn.Aggregate;
// engine.Residency over them) are aggregated by one launch each, with no
// host transfer but the state. Uploads of ordinary memory go through the
// staging lanes too. Backend.GroupResident groups resident value columns by
// a resident key column over a dense domain of keys (GROUP BY of few keys,
// with a resident boolean selection): a launch of a grouped kernel per
// value column and window of groups, the groups' states copied back
// (group.go).
//
// # Failures
//
// Out of memory at any allocation shrinks the chunks, then falls back to the
// CPU with a warning. UpdatePages shrinks its batches of Parquet chunks to
// a chunk, then warns and fails with an error matching
// backend.ErrDeviceMemory (it has no CPU decoder of pages): the dataset then
// reads those chunks on the CPU. A failed launch, copy or wait is returned, wrapped
// with what was being done, with the states untouched; the lanes are then
// drained and their launch tickets zeroed (settle), so the next call starts
// clean. faults.go injects each of these failures in tests.
//
// # Results
//
// Integer, temporal, boolean and decimal results equal the CPU backend's bit
// for bit (exact 128/192-bit sums). Float sums are compensated like the CPU
// backend's (an error-free two-sum per value and per merge) but add in
// another order: they agree with it within 2·2⁻⁵³·|sum| + 2·(n·2⁻⁵³)²·Σ|x|
// for n values, and are identical from run to run on the same device with
// the same chunk size. When finite partial sums overflow, whether the result
// is ±Inf depends on the order, as for any float summation. Float min and max
// skip NaN and order -0 before +0 exactly like the CPU backend.
//
// The ordered aggregates (first, last, arg_min, arg_max; States with Ordered
// set) equal the CPU backend's exactly: after a chunk's fused kernel, a
// second kernel on the same stream reads its min and max on the device and
// finds the first and last valid elements and the first elements equal to
// the min and the max (64-bit indices, the earliest winning ties), and the
// first and last values; rows are the view's Row plus the element index.
// Columns whose states do not ask for them run the fused kernel alone.
package cuda
