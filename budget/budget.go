// Package budget is the memory budget of reading files: every allocation
// whose size a file decides (decompressed pages, dictionaries as their
// decoders hold them, IPC buffers, standard input buffered, footers) is
// charged to a Budget before it is made, by every goroutine of every read
// that shares it. A need larger than the whole budget is refused at once,
// as an *Error; a need that fits waits until the memory is free.
//
// Two kinds of holders share a budget without deadlock:
//
//   - A unit of work that can be run again from its start (a Parquet column
//     chunk) runs under Run: it grows its Charge as it goes, never waiting
//     while it holds memory. When the memory is not free, Run releases what
//     the unit holds, waits, holding nothing, for the most the unit needed,
//     and runs it again with that much paid in advance.
//   - A holder that cannot start again (a stream being read, a footer held
//     while its file is read) acquires what it needs with Acquire or Pin
//     while it holds nothing else of the budget.
//
// Waiters are served in order of arrival.
package budget

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/arrowagg/arrowagg/internal/bytesize"
)

// Budget is an amount of memory shared by the readers charging it. Its
// methods are safe for concurrent use.
type Budget struct {
	total int64
	name  string

	mu      sync.Mutex
	used    int64 // charged, pinned included
	pinned  int64 // charged by Pin: held until their file is read
	peak    int64
	waiters list.List // of *waiter, in order of arrival
}

type waiter struct {
	n     int64
	ready chan struct{} // closed once n is charged to it
}

// New returns a budget of total bytes; name says, in refusals, how it was
// set (a flag: "--memory"; an option).
func New(total int64, name string) *Budget {
	return &Budget{total: max(total, 0), name: name}
}

// Total is the budget's size.
func (b *Budget) Total() int64 { return b.total }

// Used is what is charged now.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Peak is the most that was charged at once.
func (b *Budget) Peak() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak
}

// Error is a need larger than the budget: it can never be met.
type Error struct {
	What  string // what needs the memory
	Need  int64  // what it needs, with what its file holds for good
	Total int64  // the budget
	Name  string // how the budget is set
}

func (e *Error) Error() string {
	s := fmt.Sprintf("needs %s, the budget is %s", bytesize.Format(e.Need), bytesize.Format(e.Total))
	if e.What != "" {
		s = e.What + " " + s
	}
	if e.Name != "" {
		s += " (" + e.Name + ")"
	}
	return s
}

// refuse returns the error of what needing n (besides what is pinned) when
// that is more than the budget; nil when it fits. b.mu is held.
func (b *Budget) refuse(what string, n int64) error {
	if n > b.total-b.pinned {
		return &Error{What: what, Need: n + b.pinned, Total: b.total, Name: b.name}
	}
	return nil
}

// take charges n when it is free and nobody waits before; b.mu is held.
func (b *Budget) take(n int64) bool {
	if b.waiters.Len() > 0 || n > b.total-b.used {
		return false
	}
	b.used += n
	b.peak = max(b.peak, b.used)
	return true
}

// Acquire charges n bytes for what, waiting until they are free: an *Error
// when n is more than the budget (less what is pinned), the context's error
// when it ends first. The caller must hold nothing else of b (but what it
// pinned), and gives the bytes back with Release.
func (b *Budget) Acquire(ctx context.Context, what string, n int64) error {
	if n <= 0 {
		return nil
	}
	b.mu.Lock()
	if err := b.refuse(what, n); err != nil {
		b.mu.Unlock()
		return err
	}
	if b.take(n) {
		b.mu.Unlock()
		return nil
	}
	w := &waiter{n: n, ready: make(chan struct{})}
	e := b.waiters.PushBack(w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		select {
		case <-w.ready: // charged meanwhile: give it back
			b.used -= n
		default:
			b.waiters.Remove(e)
		}
		b.wake()
		b.mu.Unlock()
		return ctx.Err()
	}
}

// TryAcquire charges n bytes for what when they are free now, without
// waiting: false when they are not, an *Error when n is more than the
// budget (less what is pinned). Release gives them back.
func (b *Budget) TryAcquire(what string, n int64) (bool, error) {
	if n <= 0 {
		return true, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.refuse(what, n); err != nil {
		return false, err
	}
	return b.take(n), nil
}

// Release gives back n bytes of Acquire.
func (b *Budget) Release(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	if b.used < 0 {
		b.mu.Unlock()
		panic("budget: released more than was charged")
	}
	b.wake()
	b.mu.Unlock()
}

// wake charges the waiters in order while their needs fit; b.mu is held.
func (b *Budget) wake() {
	for e := b.waiters.Front(); e != nil; e = b.waiters.Front() {
		w := e.Value.(*waiter)
		if w.n > b.total-b.used {
			return
		}
		b.waiters.Remove(e)
		b.used += w.n
		b.peak = max(b.peak, b.used)
		close(w.ready)
	}
}

// Pin acquires n bytes held for as long as a file is read (its footer,
// decoded): the units of work of the file are refused when they need more
// than what is left. The caller holds nothing else of b; Unpin gives them
// back.
func (b *Budget) Pin(ctx context.Context, what string, n int64) error {
	if err := b.Acquire(ctx, what, n); err != nil {
		return err
	}
	b.mu.Lock()
	b.pinned += max(n, 0)
	b.mu.Unlock()
	return nil
}

// Unpin gives back n bytes of Pin.
func (b *Budget) Unpin(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.pinned -= n
	b.mu.Unlock()
	b.Release(n)
}

// Charge is the memory a unit of work holds, grown as it goes: see Run.
// Its methods are safe for concurrent use (a holder's buffers may be freed
// by other goroutines).
type Charge struct {
	b    *Budget
	mu   sync.Mutex
	held int64 // charged to b
	used int64 // in use by the unit (at most held)
	peak int64 // the most in use
	// wait: the unit cannot run again; a Grow that does not fit waits.
	wait bool
	ctx  context.Context
}

// retry is the error of a Grow that did not fit: the unit stops, and Run
// runs it again with need paid in advance.
type retry struct{ need int64 }

func (r *retry) Error() string {
	return fmt.Sprintf("the memory budget is busy (%s wanted)", bytesize.Format(r.need))
}

// Grow adds n bytes to what the unit uses, for what. When they are not
// charged already and are not free, the unit must stop: Grow returns an
// error that the unit returns as it is (wrapped or not) for Run to run it
// again. An *Error when the unit needs more than the budget. A nil Charge
// charges nothing.
func (c *Charge) Grow(what string, n int64) error {
	if c == nil || n <= 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	need := c.used + n
	if need <= c.held {
		c.used = need
		c.peak = max(c.peak, need)
		return nil
	}
	b := c.b
	b.mu.Lock()
	if err := b.refuse(what, need); err != nil {
		b.mu.Unlock()
		return err
	}
	extra := need - c.held
	if b.take(extra) {
		b.mu.Unlock()
		c.held, c.used = need, need
		c.peak = max(c.peak, need)
		return nil
	}
	b.mu.Unlock()
	if !c.wait {
		return &retry{need: max(c.peak, need)}
	}
	// Wait for the extra bytes alone, without the lock: the holder's
	// buffers may be given back meanwhile.
	c.mu.Unlock()
	err := b.Acquire(c.ctx, what, n)
	c.mu.Lock()
	if err != nil {
		return err
	}
	c.held += n
	c.used += n
	c.peak = max(c.peak, c.used)
	return nil
}

// Shrink gives n bytes of what the unit uses back to the unit (it keeps
// them charged until it ends).
func (c *Charge) Shrink(n int64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.used = max(c.used-max(n, 0), 0)
	c.mu.Unlock()
}

// Give gives n bytes the unit used back to the budget at once (a holder's
// buffer freed).
func (c *Charge) Give(n int64) {
	if c == nil || n <= 0 {
		return
	}
	c.mu.Lock()
	n = min(n, c.used, c.held)
	c.used -= n
	c.held -= n
	c.mu.Unlock()
	c.b.Release(n)
}

// Used is what the unit uses now.
func (c *Charge) Used() int64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// Close gives back all the charge holds.
func (c *Charge) Close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	held := c.held
	c.held, c.used = 0, 0
	c.mu.Unlock()
	c.b.Release(held)
}

// Holder returns a charge for a holder that cannot start again: its Grow
// waits for memory that is not free (the holder must hold nothing else of
// b). Close it when done. A nil Budget gives a nil Charge.
func (b *Budget) Holder(ctx context.Context) *Charge {
	if b == nil {
		return nil
	}
	return &Charge{b: b, wait: true, ctx: ctx}
}

// Run runs unit with a charge of its own, released when it returns. When
// the unit stops on a Grow that did not fit, Run waits, holding nothing,
// until the most the unit needed is free, and runs it again with that much
// charged in advance (its Grows take from it first); a unit that needs more
// still is run again with more. A nil Budget runs the unit with a nil
// Charge.
func (b *Budget) Run(ctx context.Context, what string, unit func(*Charge) error) error {
	if b == nil {
		return unit(nil)
	}
	var prepaid int64
	for {
		c := &Charge{b: b, held: prepaid}
		err := unit(c)
		c.Close()
		var r *retry
		if !errors.As(err, &r) {
			return err
		}
		prepaid = r.need
		if err := b.Acquire(ctx, what, prepaid); err != nil {
			return err
		}
	}
}
