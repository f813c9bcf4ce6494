//go:build cuda

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/arrowagg/arrowagg/internal/cudadev"
	"github.com/arrowagg/arrowagg/internal/cudrv"
	"github.com/arrowagg/arrowagg/kernels"
)

func measure(w io.Writer, ordinal int) (err error) {
	runtime.LockOSThread() // the context is current on this thread
	type step struct {
		name string
		d    time.Duration
	}
	var steps []step
	timed := func(name string, f func() error) error {
		start := time.Now()
		err := f()
		steps = append(steps, step{name, time.Since(start)})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	begin := time.Now()
	if err := timed("cuInit", cudrv.Init); err != nil {
		return err
	}
	var dev cudrv.Device
	var info cudadev.Info
	if err := timed("describe device", func() (err error) {
		dev, info, err = cudadev.Describe(ordinal)
		return err
	}); err != nil {
		return err
	}
	if err := timed("primary context", func() error {
		ctx, err := dev.RetainPrimaryCtx()
		if err != nil {
			return err
		}
		return cudrv.SetCurrentContext(ctx)
	}); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, dev.ReleasePrimaryCtx()) }()
	load := func(name, image string) error {
		return timed(name, func() error {
			m, err := cudrv.LoadData(image)
			if err != nil {
				return err
			}
			if _, err := m.Function("arrowagg_int64"); err != nil {
				return err
			}
			return m.Unload()
		})
	}
	if err := load("module load (fatbin)", kernels.AggFatbin); err != nil {
		return err
	}
	if err := load("module load (PTX)", kernels.AggPTX); err != nil {
		return err
	}
	if err := load("module load (fatbin, again)", kernels.AggFatbin); err != nil {
		return err
	}
	total := time.Since(begin)
	fmt.Fprintf(w, "device: %s\n", info)
	fmt.Fprintf(w, "fatbin: %s; %d bytes, PTX %d bytes\n", kernels.FatbinTargets, len(kernels.AggFatbin), len(kernels.AggPTX))
	cache := "on"
	if os.Getenv("CUDA_CACHE_DISABLE") == "1" {
		cache = "off (CUDA_CACHE_DISABLE=1: the PTX is compiled cold)"
	}
	fmt.Fprintf(w, "driver JIT cache: %s\n", cache)
	for _, s := range steps {
		fmt.Fprintf(w, "%-28s %9.3f ms\n", s.name, float64(s.d)/1e6)
	}
	fmt.Fprintf(w, "%-28s %9.3f ms\n", "total", float64(total)/1e6)
	return nil
}
