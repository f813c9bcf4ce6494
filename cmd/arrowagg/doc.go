// Command arrowagg aggregates the columns of Parquet files, Arrow IPC files
// and Arrow IPC streams (count, null_count, sum, min, max, mean; stddev,
// variance, approx_distinct, first, last, arg_min and arg_max on request) on
// the CPU or, in a build with the CUDA backend, on a GPU, and prints them as
// a table, JSON or CSV.
//
//	arrowagg [flags] PATH...
//
// PATH is a file, a directory (its data files, one dataset) or - for an
// Arrow IPC stream on stdin. The flags: --columns, --aggs, --format,
// --device (auto, cpu or gpu), --gpu-memory, --explain (the plan on stderr:
// per column the backend, the bytes and why), --no-stats, --threads,
// --progress, --version; arrowagg --help lists them.
//
// How the command is put together, in the order a run goes:
//
//   - main.go: signals (a first SIGINT or SIGTERM cancels the run, a second
//     ends the process) and the process's streams, handed to run as an env
//     so that tests drive the whole command in-process.
//   - run.go: run and execute, the flags (parseFlags), the engine of the
//     device policy (newEngine, package engine), the dataset (package
//     dataset: Expand, Open, Select, Aggregate), then the output (package
//     report), and the exit status (exitCode).
//   - plan.go: the --explain output (writePlan) from the engine's decisions
//     (package planner, through the engine).
//   - progress.go: the progress bar on stderr.
//   - gpu_cuda.go: in the cuda build (-tags cuda, make cuda), the import
//     that registers the CUDA backend (package backend/cuda), so that --device
//     auto and gpu run on the GPU.
//
// The reduction ladder, a teaching and measuring tool for the GPU, is not
// part of this command: it is the command arrowagg-ladder (cmd/arrowagg-ladder).
//
// Exit status: 0 on success, 1 on an internal error, 2 on bad usage or bad
// input, 130 when interrupted.
package main
