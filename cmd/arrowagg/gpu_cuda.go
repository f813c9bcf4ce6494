//go:build cuda

package main

// The cuda build of the command registers the CUDA backend, so that
// --device auto and --device gpu aggregate on the GPU.
import _ "github.com/arrowagg/arrowagg/backend/cuda"
