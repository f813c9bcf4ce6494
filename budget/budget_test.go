package budget

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRefusesMoreThanTheBudget(t *testing.T) {
	b := New(1<<30, "--memory")
	err := b.Acquire(context.Background(), "a page of 2 GiB", 2<<30)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "a page of 2 GiB needs 2.0 GiB, the budget is 1.0 GiB (--memory)", err.Error())
	assert.Zero(t, b.Used())

	require.NoError(t, b.Pin(context.Background(), "a footer", 256<<20))
	err = b.Run(context.Background(), "a chunk", func(c *Charge) error { return c.Grow("a dictionary", 800<<20) })
	require.ErrorAs(t, err, &e)
	assert.Equal(t, int64(1056<<20), e.Need, "the need counts what is pinned")
	assert.Equal(t, int64(256<<20), b.Used())
	b.Unpin(256 << 20)
	assert.Zero(t, b.Used())
}

func TestAcquireWaitsInOrder(t *testing.T) {
	b := New(100, "")
	ctx := context.Background()
	require.NoError(t, b.Acquire(ctx, "", 60))
	var wg sync.WaitGroup
	for i, n := range []int64{50, 10} { // 10 fits now, but waits behind 50
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, b.Acquire(ctx, "", n))
		}()
		require.Eventually(t, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.waiters.Len() == i+1 }, time.Second, time.Millisecond)
	}
	assert.Equal(t, int64(60), b.Used(), "the second waits behind the first")
	assert.False(t, b.Holder(ctx) == nil)
	c := &Charge{b: b}
	var r *retry
	assert.ErrorAs(t, c.Grow("", 1), &r, "a unit does not pass the waiters either")
	b.Release(60)
	wg.Wait()
	assert.Equal(t, int64(60), b.Used())
	assert.Equal(t, int64(60), b.Peak())
}

func TestTryAcquire(t *testing.T) {
	b := New(100, "")
	ok, err := b.TryAcquire("", 70)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = b.TryAcquire("", 40)
	require.NoError(t, err)
	assert.False(t, ok)
	_, err = b.TryAcquire("x", 101)
	assert.EqualError(t, err, "x needs 101 B, the budget is 100 B")
	b.Release(70)
	assert.Zero(t, b.Used())
}

func TestAcquireCancelled(t *testing.T) {
	b := New(100, "")
	require.NoError(t, b.Acquire(context.Background(), "", 100))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- b.Acquire(ctx, "", 10) }()
	require.Eventually(t, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.waiters.Len() == 1 }, time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	b.Release(100)
	assert.Zero(t, b.Used())
	b.mu.Lock()
	assert.Zero(t, b.waiters.Len())
	b.mu.Unlock()
}

// Units that grow their charges at random, many at once, all finish (none
// waits while it holds memory), the budget is never exceeded, and every
// byte comes back.
func TestRunManyUnits(t *testing.T) {
	const total = 1000
	b := New(total, "")
	var wg sync.WaitGroup
	var retried, over atomic.Int64
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for u := 0; u < 200; u++ {
				steps := make([]int64, 1+r.IntN(5))
				for i := range steps {
					steps[i] = 1 + r.Int64N(199) // at most 1000 in all
				}
				runs := 0
				err := b.Run(context.Background(), "unit", func(c *Charge) error {
					runs++
					for _, s := range steps {
						if err := c.Grow("step", s); err != nil {
							return err
						}
						if b.Used() > total {
							over.Add(1)
						}
						if r.IntN(3) == 0 {
							c.Shrink(s)
						}
					}
					return nil
				})
				if !assert.NoError(t, err) {
					return
				}
				retried.Add(int64(runs - 1))
			}
		}()
	}
	wg.Wait()
	assert.Zero(t, over.Load())
	assert.Zero(t, b.Used())
	assert.LessOrEqual(t, b.Peak(), int64(total))
	t.Logf("units run again: %d of %d", retried.Load(), 16*200)
}

// A unit whose Grow does not fit runs again, once what it needed is free,
// with that much charged in advance.
func TestRunAgain(t *testing.T) {
	b := New(100, "")
	ctx := context.Background()
	require.NoError(t, b.Acquire(ctx, "", 80))
	go func() { // the other holder finishes once the unit waits
		for {
			b.mu.Lock()
			n := b.waiters.Len()
			b.mu.Unlock()
			if n == 1 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		b.Release(80)
	}()
	runs := 0
	err := b.Run(ctx, "unit", func(c *Charge) error {
		runs++
		if err := c.Grow("", 30); err != nil {
			return err
		}
		assert.Equal(t, 2, runs, "grew past the budget")
		assert.Equal(t, int64(30), b.Used(), "charged in advance, not twice")
		if err := c.Grow("", 20); err != nil {
			return err
		}
		assert.Equal(t, int64(50), b.Used())
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 2, runs)
	assert.Zero(t, b.Used())
}

// A unit that fails for another reason fails once, and gives its memory
// back.
func TestRunError(t *testing.T) {
	b := New(100, "")
	boom := errors.New("boom")
	runs := 0
	err := b.Run(context.Background(), "", func(c *Charge) error {
		runs++
		require.NoError(t, c.Grow("", 50))
		return boom
	})
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, 1, runs)
	assert.Zero(t, b.Used())
}

// A holder that cannot start again waits for memory others hold.
func TestHolderWaits(t *testing.T) {
	b := New(100, "")
	ctx := context.Background()
	require.NoError(t, b.Acquire(ctx, "", 80))
	h := b.Holder(ctx)
	require.NoError(t, h.Grow("", 20))
	done := make(chan error)
	go func() { done <- h.Grow("", 30) }()
	select {
	case err := <-done:
		t.Fatalf("grew past the budget: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	b.Release(80)
	require.NoError(t, <-done)
	assert.Equal(t, int64(50), h.Used())
	h.Close()
	assert.Zero(t, b.Used())

	var e *Error
	assert.ErrorAs(t, b.Holder(ctx).Grow("", 101), &e)
}

func TestNil(t *testing.T) {
	var b *Budget
	assert.Nil(t, b.Holder(context.Background()))
	var c *Charge
	assert.NoError(t, c.Grow("", 1<<40))
	c.Shrink(1)
	c.Close()
	assert.NoError(t, b.Run(context.Background(), "", func(c *Charge) error { return c.Grow("", 5) }))
}

func TestDefaultBytes(t *testing.T) {
	assert.Equal(t, int64(DefaultMax), defaultBytes(24<<30))
	assert.Equal(t, int64(512<<20), defaultBytes(2<<30))
	assert.Equal(t, int64(DefaultMin), defaultBytes(128<<20))
	assert.Equal(t, int64(DefaultMax), defaultBytes(0))
	d := DefaultBytes()
	assert.True(t, d >= DefaultMin && d <= DefaultMax, d)
	assert.Same(t, Default(), Default())
	assert.Equal(t, d, Default().Total())
}
