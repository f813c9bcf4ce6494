//go:build cuda

package cudrv

/*
#cgo LDFLAGS: -ldl
#cgo linux CFLAGS: -I/usr/local/cuda/include
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The driver's library is opened when the program first needs it (acu_open,
// from Init or Version), not by the dynamic loader at start: a cuda build
// starts as fast as the CPU build and runs, on the CPU, where libcuda.so.1 is
// not installed. Each call the package makes is listed once here, with its
// parameters; cuda.h's macros give the versioned entry point of each name
// (cuMemAlloc is cuMemAlloc_v2), which is the symbol looked up.
#define ACU_DRIVER_CALLS(X) \
	X(cuInit, (unsigned int f), (f)) \
	X(cuDriverGetVersion, (int *v), (v)) \
	X(cuDeviceGetCount, (int *n), (n)) \
	X(cuDeviceGet, (CUdevice *d, int ordinal), (d, ordinal)) \
	X(cuDeviceGetName, (char *name, int len, CUdevice d), (name, len, d)) \
	X(cuDeviceGetAttribute, (int *v, CUdevice_attribute a, CUdevice d), (v, a, d)) \
	X(cuDeviceTotalMem, (size_t *n, CUdevice d), (n, d)) \
	X(cuDevicePrimaryCtxRetain, (CUcontext *c, CUdevice d), (c, d)) \
	X(cuDevicePrimaryCtxRelease, (CUdevice d), (d)) \
	X(cuCtxCreate, (CUcontext *c, unsigned int flags, CUdevice d), (c, flags, d)) \
	X(cuCtxDestroy, (CUcontext c), (c)) \
	X(cuCtxSetCurrent, (CUcontext c), (c)) \
	X(cuCtxSynchronize, (void), ()) \
	X(cuMemGetInfo, (size_t *free, size_t *total), (free, total)) \
	X(cuStreamCreate, (CUstream *s, unsigned int flags), (s, flags)) \
	X(cuStreamDestroy, (CUstream s), (s)) \
	X(cuStreamSynchronize, (CUstream s), (s)) \
	X(cuStreamWaitEvent, (CUstream s, CUevent e, unsigned int flags), (s, e, flags)) \
	X(cuEventCreate, (CUevent *e, unsigned int flags), (e, flags)) \
	X(cuEventDestroy, (CUevent e), (e)) \
	X(cuEventRecord, (CUevent e, CUstream s), (e, s)) \
	X(cuEventSynchronize, (CUevent e), (e)) \
	X(cuEventQuery, (CUevent e), (e)) \
	X(cuEventElapsedTime, (float *ms, CUevent start, CUevent end), (ms, start, end)) \
	X(cuMemAlloc, (CUdeviceptr *p, size_t n), (p, n)) \
	X(cuMemFree, (CUdeviceptr p), (p)) \
	X(cuMemHostAlloc, (void **p, size_t n, unsigned int flags), (p, n, flags)) \
	X(cuMemFreeHost, (void *p), (p)) \
	X(cuPointerGetAttribute, (void *data, CUpointer_attribute a, CUdeviceptr p), (data, a, p)) \
	X(cuMemsetD8, (CUdeviceptr p, unsigned char v, size_t n), (p, v, n)) \
	X(cuMemsetD32, (CUdeviceptr p, unsigned int v, size_t n), (p, v, n)) \
	X(cuMemsetD8Async, (CUdeviceptr p, unsigned char v, size_t n, CUstream s), (p, v, n, s)) \
	X(cuMemsetD32Async, (CUdeviceptr p, unsigned int v, size_t n, CUstream s), (p, v, n, s)) \
	X(cuMemcpyHtoD, (CUdeviceptr dst, const void *src, size_t n), (dst, src, n)) \
	X(cuMemcpyDtoH, (void *dst, CUdeviceptr src, size_t n), (dst, src, n)) \
	X(cuMemcpyDtoD, (CUdeviceptr dst, CUdeviceptr src, size_t n), (dst, src, n)) \
	X(cuMemcpyHtoDAsync, (CUdeviceptr dst, const void *src, size_t n, CUstream s), (dst, src, n, s)) \
	X(cuMemcpyDtoHAsync, (void *dst, CUdeviceptr src, size_t n, CUstream s), (dst, src, n, s)) \
	X(cuMemcpyDtoDAsync, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s), (dst, src, n, s)) \
	X(cuModuleLoadData, (CUmodule *m, const void *image), (m, image)) \
	X(cuModuleGetFunction, (CUfunction *f, CUmodule m, const char *name), (f, m, name)) \
	X(cuModuleUnload, (CUmodule m), (m)) \
	X(cuOccupancyMaxActiveBlocksPerMultiprocessor, (int *n, CUfunction f, int block, size_t shared), (n, f, block, shared)) \
	X(cuFuncSetAttribute, (CUfunction f, CUfunction_attribute a, int v), (f, a, v)) \
	X(cuLaunchKernel, (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared, CUstream s, void **params, void **extra), (f, gx, gy, gz, bx, by, bz, shared, s, params, extra)) \
	X(cuGetErrorName, (CUresult r, const char **name), (r, name)) \
	X(cuGetErrorString, (CUresult r, const char **desc), (r, desc))

#define ACU_STR(x) #x
#define ACU_XSTR(x) ACU_STR(x)

// acu_p_NAME points at the driver's NAME once acu_open succeeded.
#define ACU_POINTER(name, params, args) static __typeof__(name) *acu_p_##name;
ACU_DRIVER_CALLS(ACU_POINTER)

// acu_NAME calls the driver's NAME; CUDA_ERROR_NOT_INITIALIZED before the
// library is open (then nothing is written through the arguments).
#define ACU_WRAPPER(name, params, args) \
	static CUresult acu_##name params { return acu_p_##name ? acu_p_##name args : CUDA_ERROR_NOT_INITIALIZED; }
ACU_DRIVER_CALLS(ACU_WRAPPER)

// acu_open opens the driver's library, lib, and looks up every call: NULL
// when done, else why not (static storage; then no pointer is set). Go calls
// it once for libcuda.so.1 (sync.Once orders it before any call); tests call
// it with other libraries.
static const char *acu_open(const char *lib) {
	static char why[512];
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		snprintf(why, sizeof why, "%s", e ? e : "cannot open the library");
		return why;
	}
#define ACU_CHECK(name, params, args) \
	if (dlsym(h, ACU_XSTR(name)) == NULL) { \
		snprintf(why, sizeof why, "%s has no %s: the driver is older than this program needs", lib, ACU_XSTR(name)); \
		dlclose(h); \
		return why; \
	}
	ACU_DRIVER_CALLS(ACU_CHECK)
#define ACU_LOOKUP(name, params, args) acu_p_##name = (__typeof__(name) *)dlsym(h, ACU_XSTR(name));
	ACU_DRIVER_CALLS(ACU_LOOKUP)
	return NULL;
}

// acu_bound reports whether the calls are bound (acu_open succeeded).
static int acu_bound(void) { return acu_p_cuInit != NULL; }

// The calls whose names cuda.h maps to versioned or per-thread entry points
// with function-like macros are wrapped, so that cgo sees plain functions.
static CUresult acu_memcpy_htod(CUdeviceptr dst, uintptr_t src, size_t n) { return acu_cuMemcpyHtoD(dst, (const void *)src, n); }
static CUresult acu_memcpy_dtoh(uintptr_t dst, CUdeviceptr src, size_t n) { return acu_cuMemcpyDtoH((void *)dst, src, n); }
static CUresult acu_memcpy_dtod(CUdeviceptr dst, CUdeviceptr src, size_t n) { return acu_cuMemcpyDtoD(dst, src, n); }
static CUresult acu_memcpy_htod_async(CUdeviceptr dst, uintptr_t src, size_t n, CUstream s) {
	return acu_cuMemcpyHtoDAsync(dst, (const void *)src, n, s);
}
static CUresult acu_memcpy_dtoh_async(uintptr_t dst, CUdeviceptr src, size_t n, CUstream s) {
	return acu_cuMemcpyDtoHAsync((void *)dst, src, n, s);
}
static CUresult acu_memcpy_dtod_async(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
	return acu_cuMemcpyDtoDAsync(dst, src, n, s);
}
static CUresult acu_memset_d8(CUdeviceptr p, unsigned char v, size_t n) { return acu_cuMemsetD8(p, v, n); }
static CUresult acu_memset_d32(CUdeviceptr p, unsigned int v, size_t n) { return acu_cuMemsetD32(p, v, n); }
static CUresult acu_memset_d8_async(CUdeviceptr p, unsigned char v, size_t n, CUstream s) { return acu_cuMemsetD8Async(p, v, n, s); }
static CUresult acu_memset_d32_async(CUdeviceptr p, unsigned int v, size_t n, CUstream s) { return acu_cuMemsetD32Async(p, v, n, s); }
static CUresult acu_stream_sync(CUstream s) { return acu_cuStreamSynchronize(s); }
static CUresult acu_stream_wait(CUstream s, CUevent e, unsigned int flags) { return acu_cuStreamWaitEvent(s, e, flags); }
static CUresult acu_event_record(CUevent e, CUstream s) { return acu_cuEventRecord(e, s); }

// acu_params is Params' buffer, passed by value: a copy on the C stack, so
// that no Go memory is handed to C and a launch allocates nothing.
struct acu_params { unsigned char b[256]; };

// acu_launch launches f with its parameters packed in p (size bytes, each
// parameter at its natural alignment), which the driver copies at the call.
static CUresult acu_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                           unsigned shared, CUstream s, struct acu_params p, size_t size) {
	void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, p.b, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
	return acu_cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, s, NULL, size ? extra : NULL);
}

// acu_load_image copies an image (PTX text, a cubin or a fatbin) to aligned,
// NUL-terminated C memory and loads it: the driver wants PTX terminated and
// a fatbin's header aligned, which Go's bytes need not be.
static CUresult acu_load_image(CUmodule *m, const void *image, size_t n) {
	char *p = malloc(n + 1);
	if (p == NULL) return CUDA_ERROR_OUT_OF_MEMORY;
	memcpy(p, image, n);
	p[n] = 0;
	CUresult r = acu_cuModuleLoadData(m, p);
	free(p);
	return r;
}

// acu_pinned_range reports in *base and *size the page-locked host
// allocation that contains p (either from cuMemHostAlloc or registered with
// cuMemHostRegister); CUDA_ERROR_INVALID_VALUE for pageable memory.
static CUresult acu_pinned_range(uintptr_t p, uintptr_t *base, size_t *size) {
	unsigned int mt = 0;
	CUresult r = acu_cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)p);
	if (r != CUDA_SUCCESS) return r;
	if (mt != CU_MEMORYTYPE_HOST) return CUDA_ERROR_INVALID_VALUE;
	CUdeviceptr start = 0;
	r = acu_cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, (CUdeviceptr)p);
	if (r != CUDA_SUCCESS) return r;
	size_t n = 0;
	r = acu_cuPointerGetAttribute(&n, CU_POINTER_ATTRIBUTE_RANGE_SIZE, (CUdeviceptr)p);
	if (r != CUDA_SUCCESS) return r;
	*base = (uintptr_t)start;
	*size = n;
	return CUDA_SUCCESS;
}
*/
import "C"

import (
	"fmt"
	"math"
	"sync"
	"time"
	"unsafe"

	"github.com/arrowagg/arrowagg/internal/startup"
)

// Error is a CUresult other than CUDA_SUCCESS. Errors are comparable values,
// so errors.Is(err, OutOfMemory) matches a wrapped driver error by its code.
type Error int

// The driver errors callers test for.
const (
	InvalidValue   Error = C.CUDA_ERROR_INVALID_VALUE
	OutOfMemory    Error = C.CUDA_ERROR_OUT_OF_MEMORY
	NotInitialized Error = C.CUDA_ERROR_NOT_INITIALIZED
	NoDevice       Error = C.CUDA_ERROR_NO_DEVICE
	InvalidDevice  Error = C.CUDA_ERROR_INVALID_DEVICE
	InvalidImage   Error = C.CUDA_ERROR_INVALID_IMAGE
	NoBinaryForGPU Error = C.CUDA_ERROR_NO_BINARY_FOR_GPU
	NotFound       Error = C.CUDA_ERROR_NOT_FOUND
	NotReady       Error = C.CUDA_ERROR_NOT_READY
	IllegalAddress Error = C.CUDA_ERROR_ILLEGAL_ADDRESS
	LaunchFailed   Error = C.CUDA_ERROR_LAUNCH_FAILED
	Unknown        Error = C.CUDA_ERROR_UNKNOWN
)

// Error is the driver's name and description of the code, e.g.
// "CUDA_ERROR_OUT_OF_MEMORY: out of memory".
func (e Error) Error() string {
	var name, desc *C.char
	C.acu_cuGetErrorName(C.CUresult(e), &name)
	C.acu_cuGetErrorString(C.CUresult(e), &desc)
	if name == nil || desc == nil {
		return fmt.Sprintf("CUDA driver error %d", int(e))
	}
	return C.GoString(name) + ": " + C.GoString(desc)
}

func result(r C.CUresult) error {
	if r == C.CUDA_SUCCESS {
		return nil
	}
	return Error(r)
}

var (
	openOnce sync.Once
	openErr  error
	initOnce sync.Once
	initErr  error
)

// open opens the driver's library (libcuda.so.1) the first time it is called
// in the process, and returns that attempt's error every time.
func open() error {
	openOnce.Do(func() {
		start := time.Now()
		openErr = load(driverLibrary)
		startup.Trace("libcuda.so.1 opened", start, openErr)
	})
	return openErr
}

// driverLibrary is the file name of the driver's library, found where the
// dynamic loader finds libraries.
const driverLibrary = "libcuda.so.1"

// load opens lib as the driver's library and binds every call to it.
func load(lib string) error {
	name := C.CString(lib)
	defer C.free(unsafe.Pointer(name))
	if why := C.acu_open(name); why != nil {
		return fmt.Errorf("loading the CUDA driver: %s", C.GoString(why))
	}
	return nil
}

// bound reports whether the driver's calls are bound to a library.
func bound() bool { return C.acu_bound() != 0 }

// Init opens the driver's library and initializes the driver (cuInit) the
// first time it is called in the process, and returns that call's error
// every time: nothing loads or initializes the driver at program start, so
// a binary runs on a host without a GPU, or without the driver installed,
// until something asks for one. Every other call of the package that needs
// the driver calls Init first.
func Init() error {
	initOnce.Do(func() {
		if initErr = open(); initErr != nil {
			return
		}
		start := time.Now()
		initErr = result(C.acu_cuInit(0))
		startup.Trace("cuInit", start, initErr)
		if initErr != nil {
			initErr = fmt.Errorf("initializing the CUDA driver: %w", initErr)
		}
	})
	return initErr
}

// Version is the CUDA version of the driver, e.g. 13000 for 13.0 (0 when it
// cannot tell, or the driver is not installed). It does not need Init.
func Version() int {
	if open() != nil {
		return 0
	}
	var v C.int
	if C.acu_cuDriverGetVersion(&v) != C.CUDA_SUCCESS {
		return 0
	}
	return int(v)
}

// NumDevices is the number of GPUs the driver sees.
func NumDevices() (int, error) {
	if err := Init(); err != nil {
		return 0, err
	}
	var n C.int
	if err := result(C.acu_cuDeviceGetCount(&n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// Device is a GPU (CUdevice).
type Device int

// GetDevice returns GPU ordinal.
func GetDevice(ordinal int) (Device, error) {
	if err := Init(); err != nil {
		return 0, err
	}
	var d C.CUdevice
	if err := result(C.acu_cuDeviceGet(&d, C.int(ordinal))); err != nil {
		return 0, err
	}
	return Device(d), nil
}

// Name is the device's name, e.g. "NVIDIA H100 80GB HBM3".
func (d Device) Name() (string, error) {
	var buf [256]C.char
	if err := result(C.acu_cuDeviceGetName(&buf[0], C.int(len(buf)), C.CUdevice(d))); err != nil {
		return "", err
	}
	return C.GoString(&buf[0]), nil
}

// DeviceAttribute is a CUdevice_attribute.
type DeviceAttribute int

// The attributes read.
const (
	MultiprocessorCount    DeviceAttribute = C.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
	ComputeCapabilityMajor DeviceAttribute = C.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
	ComputeCapabilityMinor DeviceAttribute = C.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
	// SharedPerBlockOptin is the most shared memory a block may have once
	// its kernel opts in (Function.SetMaxDynamicShared).
	SharedPerBlockOptin DeviceAttribute = C.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
	// SharedPerMultiprocessor is the shared memory of a multiprocessor.
	SharedPerMultiprocessor DeviceAttribute = C.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
)

// Attribute reads an attribute of the device.
func (d Device) Attribute(a DeviceAttribute) (int, error) {
	var v C.int
	if err := result(C.acu_cuDeviceGetAttribute(&v, C.CUdevice_attribute(a), C.CUdevice(d))); err != nil {
		return 0, err
	}
	return int(v), nil
}

// ComputeCapability is the device's compute capability, e.g. 9, 0 for sm_90.
func (d Device) ComputeCapability() (major, minor int, err error) {
	if major, err = d.Attribute(ComputeCapabilityMajor); err != nil {
		return 0, 0, err
	}
	if minor, err = d.Attribute(ComputeCapabilityMinor); err != nil {
		return 0, 0, err
	}
	return major, minor, nil
}

// TotalMem is the device's memory in bytes.
func (d Device) TotalMem() (int64, error) {
	var n C.size_t
	if err := result(C.acu_cuDeviceTotalMem(&n, C.CUdevice(d))); err != nil {
		return 0, err
	}
	return int64(n), nil
}

// Context is a driver context (CUcontext); the zero Context is none.
type Context struct{ c C.CUcontext }

// RetainPrimaryCtx retains the device's primary context, which the runtime
// API and other libraries of the process share; ReleasePrimaryCtx releases
// it. It is not made current.
func (d Device) RetainPrimaryCtx() (Context, error) {
	var c C.CUcontext
	if err := result(C.acu_cuDevicePrimaryCtxRetain(&c, C.CUdevice(d))); err != nil {
		return Context{}, err
	}
	return Context{c}, nil
}

// ReleasePrimaryCtx releases what RetainPrimaryCtx retained.
func (d Device) ReleasePrimaryCtx() error {
	return result(C.acu_cuDevicePrimaryCtxRelease(C.CUdevice(d)))
}

// ContextFlags are the flags of MakeContext.
type ContextFlags uint

// SchedAuto lets the driver choose how a waiting thread waits.
const SchedAuto ContextFlags = C.CU_CTX_SCHED_AUTO

// MakeContext creates a context of its own on the device and makes it
// current on the calling thread; Destroy destroys it.
func (d Device) MakeContext(flags ContextFlags) (Context, error) {
	var c C.CUcontext
	if err := result(C.acu_cuCtxCreate(&c, C.uint(flags), C.CUdevice(d))); err != nil {
		return Context{}, err
	}
	return Context{c}, nil
}

// Destroy destroys a context from MakeContext.
func (c Context) Destroy() error { return result(C.acu_cuCtxDestroy(c.c)) }

// SetCurrentContext binds c to the calling OS thread.
func SetCurrentContext(c Context) error { return result(C.acu_cuCtxSetCurrent(c.c)) }

// Synchronize waits for all the work of the current context.
func Synchronize() error { return result(C.acu_cuCtxSynchronize()) }

// MemInfo is the free and total device memory of the current context's
// device, in bytes.
func MemInfo() (free, total int64, err error) {
	var f, t C.size_t
	if err := result(C.acu_cuMemGetInfo(&f, &t)); err != nil {
		return 0, 0, err
	}
	return int64(f), int64(t), nil
}

// Stream is a stream of the current context (CUstream); the zero Stream is
// the legacy default stream.
type Stream struct{ s C.CUstream }

// StreamFlags are the flags of MakeStream.
type StreamFlags uint

// The stream flags.
const (
	DefaultStream StreamFlags = C.CU_STREAM_DEFAULT      // ordered with the legacy default stream
	NonBlocking   StreamFlags = C.CU_STREAM_NON_BLOCKING // not ordered with the legacy default stream
)

// MakeStream creates a stream.
func MakeStream(flags StreamFlags) (Stream, error) {
	var s C.CUstream
	if err := result(C.acu_cuStreamCreate(&s, C.uint(flags))); err != nil {
		return Stream{}, err
	}
	return Stream{s}, nil
}

// Destroy destroys the stream (its pending work still runs).
func (s Stream) Destroy() error { return result(C.acu_cuStreamDestroy(s.s)) }

// Synchronize waits for the stream's work.
func (s Stream) Synchronize() error { return result(C.acu_stream_sync(s.s)) }

// Wait makes later work on the stream wait for ev's latest record.
func (s Stream) Wait(ev Event, flags uint) error {
	return result(C.acu_stream_wait(s.s, ev.e, C.uint(flags)))
}

// Event is a CUevent; the zero Event is none.
type Event struct{ e C.CUevent }

// EventFlags are the flags of MakeEvent.
type EventFlags uint

// The event flags.
const (
	DefaultEvent  EventFlags = C.CU_EVENT_DEFAULT        // records timing (Elapsed)
	DisableTiming EventFlags = C.CU_EVENT_DISABLE_TIMING // cheaper to record and wait for
)

// MakeEvent creates an event.
func MakeEvent(flags EventFlags) (Event, error) {
	var e C.CUevent
	if err := result(C.acu_cuEventCreate(&e, C.uint(flags))); err != nil {
		return Event{}, err
	}
	return Event{e}, nil
}

// DestroyEvent destroys *e and sets it to the zero Event.
func DestroyEvent(e *Event) error {
	err := result(C.acu_cuEventDestroy(e.e))
	*e = Event{}
	return err
}

// Record records the event after the work enqueued on s so far.
func (e Event) Record(s Stream) error { return result(C.acu_event_record(e.e, s.s)) }

// Synchronize waits until the event's latest record has passed.
func (e Event) Synchronize() error { return result(C.acu_cuEventSynchronize(e.e)) }

// Query is nil when the event's latest record has passed, NotReady when it
// has not.
func (e Event) Query() error { return result(C.acu_cuEventQuery(e.e)) }

// Elapsed is the time from e to end in milliseconds (both recorded, with
// timing).
func (e Event) Elapsed(end Event) (float64, error) {
	var ms C.float
	if err := result(C.acu_cuEventElapsedTime(&ms, e.e, end.e)); err != nil {
		return 0, err
	}
	return float64(ms), nil
}

// DevicePtr is an address in device memory.
type DevicePtr uintptr

// MemAlloc allocates n bytes of device memory.
func MemAlloc(n int64) (DevicePtr, error) {
	var p C.CUdeviceptr
	if err := result(C.acu_cuMemAlloc(&p, C.size_t(n))); err != nil {
		return 0, err
	}
	return DevicePtr(p), nil
}

// MemFree frees device memory from MemAlloc.
func MemFree(p DevicePtr) error { return result(C.acu_cuMemFree(C.CUdeviceptr(p))) }

// MemHostAlloc allocates n bytes of page-locked host memory, portable across
// contexts; MemFreeHost frees it.
func MemHostAlloc(n int64) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	if err := result(C.acu_cuMemHostAlloc(&p, C.size_t(n), C.CU_MEMHOSTALLOC_PORTABLE)); err != nil {
		return nil, err
	}
	return p, nil
}

// MemFreeHost frees memory from MemHostAlloc.
func MemFreeHost(p unsafe.Pointer) error { return result(C.acu_cuMemFreeHost(p)) }

// PinnedRange is the page-locked host allocation that contains p (made by
// MemHostAlloc or registered with cuMemHostRegister, by any library of the
// process); ok is false for pageable memory.
func PinnedRange(p uintptr) (base uintptr, size int, ok bool) {
	var b C.uintptr_t
	var n C.size_t
	if C.acu_pinned_range(C.uintptr_t(p), &b, &n) != C.CUDA_SUCCESS {
		return 0, 0, false
	}
	return uintptr(b), int(n), true
}

// MemsetD8 sets n bytes at p to v.
func MemsetD8(p DevicePtr, v uint8, n int64) error {
	return result(C.acu_memset_d8(C.CUdeviceptr(p), C.uchar(v), C.size_t(n)))
}

// MemsetD32 sets n 32-bit words at p to v.
func MemsetD32(p DevicePtr, v uint32, n int64) error {
	return result(C.acu_memset_d32(C.CUdeviceptr(p), C.uint(v), C.size_t(n)))
}

// MemsetD8Async enqueues MemsetD8 on s.
func MemsetD8Async(p DevicePtr, v uint8, n int64, s Stream) error {
	return result(C.acu_memset_d8_async(C.CUdeviceptr(p), C.uchar(v), C.size_t(n), s.s))
}

// MemsetD32Async enqueues MemsetD32 on s.
func MemsetD32Async(p DevicePtr, v uint32, n int64, s Stream) error {
	return result(C.acu_memset_d32_async(C.CUdeviceptr(p), C.uint(v), C.size_t(n), s.s))
}

// MemcpyHtoD copies n bytes from host memory at src to dst and waits.
func MemcpyHtoD(dst DevicePtr, src unsafe.Pointer, n int64) error {
	return result(C.acu_memcpy_htod(C.CUdeviceptr(dst), C.uintptr_t(uintptr(src)), C.size_t(n)))
}

// MemcpyDtoH copies n bytes from src to host memory at dst and waits.
func MemcpyDtoH(dst unsafe.Pointer, src DevicePtr, n int64) error {
	return result(C.acu_memcpy_dtoh(C.uintptr_t(uintptr(dst)), C.CUdeviceptr(src), C.size_t(n)))
}

// MemcpyDtoD copies n bytes of device memory.
func MemcpyDtoD(dst, src DevicePtr, n int64) error {
	return result(C.acu_memcpy_dtod(C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n)))
}

// MemcpyHtoDAsync enqueues a copy of n bytes from host memory at src to dst
// on s. From pageable memory the driver stages the copy and returns once the
// source may be reused; from page-locked memory it returns at once, and src
// must stay valid and unchanged until the copy is done.
func MemcpyHtoDAsync(dst DevicePtr, src unsafe.Pointer, n int64, s Stream) error {
	return result(C.acu_memcpy_htod_async(C.CUdeviceptr(dst), C.uintptr_t(uintptr(src)), C.size_t(n), s.s))
}

// MemcpyDtoHAsync enqueues a copy of n bytes from src to host memory at dst
// on s; dst must stay valid until the copy is done.
func MemcpyDtoHAsync(dst unsafe.Pointer, src DevicePtr, n int64, s Stream) error {
	return result(C.acu_memcpy_dtoh_async(C.uintptr_t(uintptr(dst)), C.CUdeviceptr(src), C.size_t(n), s.s))
}

// MemcpyDtoDAsync enqueues a copy of n bytes of device memory on s.
func MemcpyDtoDAsync(dst, src DevicePtr, n int64, s Stream) error {
	return result(C.acu_memcpy_dtod_async(C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(n), s.s))
}

// Module is a loaded module (CUmodule); the zero Module is none.
type Module struct{ m C.CUmodule }

// LoadData loads a module into the current context from an image: PTX text
// (which the driver compiles for the device, or takes from its cache of
// earlier compilations), a cubin, or a fatbin, from which the driver takes
// the machine code (SASS) for the device's architecture when there is some,
// and compiles the fatbin's PTX otherwise.
func LoadData(image string) (Module, error) {
	if len(image) == 0 {
		return Module{}, InvalidImage
	}
	var m C.CUmodule
	if err := result(C.acu_load_image(&m, unsafe.Pointer(unsafe.StringData(image)), C.size_t(len(image)))); err != nil {
		return Module{}, err
	}
	return Module{m}, nil
}

// Function finds the kernel called name.
func (m Module) Function(name string) (Function, error) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var f C.CUfunction
	if err := result(C.acu_cuModuleGetFunction(&f, m.m, cs)); err != nil {
		return Function{}, err
	}
	return Function{f}, nil
}

// Unload unloads the module.
func (m Module) Unload() error { return result(C.acu_cuModuleUnload(m.m)) }

// Function is a kernel of a loaded module (CUfunction).
type Function struct{ f C.CUfunction }

// MaxActiveBlocksPerMultiProcessor is how many blocks of block threads (and
// dynamicShared bytes of dynamic shared memory) fit on a multiprocessor at
// once.
func (f Function) MaxActiveBlocksPerMultiProcessor(block int, dynamicShared int64) (int, error) {
	var n C.int
	if err := result(C.acu_cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f.f, C.int(block), C.size_t(dynamicShared))); err != nil {
		return 0, err
	}
	return int(n), nil
}

// SetMaxDynamicShared lets launches of the kernel have up to n bytes of
// dynamic shared memory: past 48 KiB, a kernel must opt in.
func (f Function) SetMaxDynamicShared(n int) error {
	return result(C.acu_cuFuncSetAttribute(f.f, C.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, C.int(n)))
}

// Launch enqueues the kernel on s with a grid of gx×gy×gz blocks of
// bx×by×bz threads, shared bytes of dynamic shared memory, and the
// parameters in p (nil for none), which the driver copies at the call.
func (f Function) Launch(gx, gy, gz, bx, by, bz, shared int, s Stream, p *Params) error {
	var buf C.struct_acu_params
	var size C.size_t
	if p != nil && p.n > 0 {
		buf, size = *(*C.struct_acu_params)(unsafe.Pointer(&p.buf)), C.size_t(p.n)
	}
	return result(C.acu_launch(f.f, C.uint(gx), C.uint(gy), C.uint(gz), C.uint(bx), C.uint(by), C.uint(bz),
		C.uint(shared), s.s, buf, size))
}

// maxParamBytes is the room of Params (acu_params): more than any kernel
// here takes (the driver's own limit is 4 KiB).
const maxParamBytes = 256

// Params are the parameters of a launch in the order of the kernel's
// signature, each laid out with its own size and alignment as the kernel
// expects them: U32 for a 32-bit integer, U64 for a 64-bit one, Ptr for a
// pointer. The zero Params is empty; it is meant to live on the caller's
// stack, so that a launch allocates nothing.
type Params struct {
	buf [maxParamBytes]byte
	n   int
}

func (p *Params) put(v uint64, size int) {
	at := (p.n + size - 1) &^ (size - 1)
	if at+size > len(p.buf) {
		panic(fmt.Sprintf("cudrv: kernel parameters beyond %d bytes", len(p.buf)))
	}
	for i := range size {
		p.buf[at+i] = byte(v >> (8 * i)) // little-endian, as every CUDA host is
	}
	p.n = at + size
}

// U32 appends a 32-bit parameter (int, unsigned int, float bits).
func (p *Params) U32(v uint32) *Params { p.put(uint64(v), 4); return p }

// U64 appends a 64-bit parameter (long long, size_t, double bits).
func (p *Params) U64(v uint64) *Params { p.put(v, 8); return p }

// Ptr appends a device pointer parameter.
func (p *Params) Ptr(v DevicePtr) *Params { p.put(uint64(v), 8); return p }

// F32 appends a float parameter.
func (p *Params) F32(v float32) *Params { return p.U32(math.Float32bits(v)) }

// Len is the parameters' size in bytes, padding included.
func (p *Params) Len() int { return p.n }
