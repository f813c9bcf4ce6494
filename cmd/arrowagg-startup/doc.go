// Command arrowagg-startup measures the fixed cost of the CUDA build's start
// on a GPU host, step by step, each the first of its kind in the process:
//
//	cuInit                    initializing the driver
//	describe device           count, handle, name, attributes of GPU 0
//	primary context           retaining GPU 0's primary context, making it current
//	module load (fatbin)      the backend's kernels as it loads them: the SASS
//	                          for the GPU, when the fatbin has some
//	module load (PTX)         the same kernels from their PTX alone: the driver's
//	                          JIT, or its cache of earlier JITs
//	module load (fatbin, again)  once more, warm
//
// and prints them in milliseconds, with the driver's and the GPU's names. Run
// it with CUDA_CACHE_DISABLE=1 to see the JIT of a cold driver cache (what
// the PTX-only kernels cost on a fresh host or after a driver upgrade).
// scripts/startup-check.sh runs it beside its timings of the commands.
//
//	arrowagg-startup [-ordinal N]
//
// It needs the cuda build tag; without it, it says so and exits with status 2.
package main
