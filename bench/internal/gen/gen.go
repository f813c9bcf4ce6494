// Package gen holds what the benchmark data generators share: sizes on
// their command lines, and record batches made on several goroutines and
// written in order.
package gen

import (
	"context"
	"fmt"
	"sync"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowagg/arrowagg/internal/bytesize"
)

// ParseSize reads a size of data to generate: a positive number of bytes as
// bytesize.Parse reads it ("20GiB", "512MiB", "1.5G", "1073741824").
func ParseSize(s string) (int64, error) {
	n, err := bytesize.Parse(s)
	if err == nil && n <= 0 {
		err = fmt.Errorf("invalid size %q (want more than 0 bytes)", s)
	}
	return n, err
}

// Ordered makes record batches with gen(i) for i = 0, 1, ... (n of them,
// or without end when n < 0) on workers goroutines, at most workers ahead
// of use, and hands them to use in order; use owns the batch it gets (and
// releases it). Ordered returns when n batches were used, use says done or
// fails, or ctx ends (ctx's error), having stopped the workers and released
// the batches made ahead.
func Ordered(ctx context.Context, workers, n int, gen func(i int) arrow.Record, use func(i int, rec arrow.Record) (done bool, err error)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type job struct {
		i   int
		out chan arrow.Record
	}
	jobs := make(chan job)
	pending := make(chan job, max(workers, 1))
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				j.out <- gen(j.i)
			}
		}()
	}
	go func() {
		defer close(pending)
		defer close(jobs)
		for i := 0; n < 0 || i < n; i++ {
			j := job{i: i, out: make(chan arrow.Record, 1)}
			select {
			case pending <- j:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer func() {
		// Stop the producer and the workers, then release the batches made
		// ahead and not used.
		cancel()
		wg.Wait()
		for j := range pending {
			select {
			case rec := <-j.out:
				rec.Release()
			default:
			}
		}
	}()
	for j := range pending {
		var rec arrow.Record
		select {
		case rec = <-j.out:
		case <-ctx.Done(): // the job may never have reached a worker
			return ctx.Err()
		}
		done, err := use(j.i, rec)
		if err != nil || done {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// Mix is splitmix64's output function applied to x + the golden ratio: the
// generators' one hash of a row number (row i, column c draws Mix(k*i + c)).
func Mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
