package staging

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeDevice is a copy engine in a goroutine: copies and marks run in the
// order enqueued, later, each copy reading its source only when it runs
// (as a DMA does), so a slot refilled too early corrupts what arrives (and
// the race detector sees it). Device addresses index mem.
type fakeDevice struct {
	t       *testing.T
	mem     []byte
	ops     chan func()
	done    chan struct{}
	mu      sync.Mutex
	cond    *sync.Cond
	marked  []int // per slot: marks enqueued (device thread only)
	passed  []int // per slot: marks the engine has passed (mu)
	delay   time.Duration
	log     []string // what the stream did, in order (device thread only)
	failAt  int      // the failAt-th Copy fails (0: never)
	copies  int
	maxLead int // most copies enqueued and not yet run
	pending int // mu
}

func newFakeDevice(t *testing.T, memBytes, slots int) *fakeDevice {
	f := &fakeDevice{t: t, mem: make([]byte, memBytes), ops: make(chan func(), 1<<16), done: make(chan struct{}),
		marked: make([]int, slots), passed: make([]int, slots)}
	f.cond = sync.NewCond(&f.mu)
	go func() {
		defer close(f.done)
		for op := range f.ops {
			op()
		}
	}()
	return f
}

// stop drains the engine.
func (f *fakeDevice) stop() {
	close(f.ops)
	<-f.done
}

// sync waits for everything enqueued so far.
func (f *fakeDevice) sync() {
	ch := make(chan struct{})
	f.ops <- func() { close(ch) }
	<-ch
}

func (f *fakeDevice) Copy(dst uintptr, src []byte) error {
	f.copies++
	if f.copies == f.failAt {
		return errors.New("injected copy failure")
	}
	f.log = append(f.log, fmt.Sprintf("copy %d", dst))
	f.mu.Lock()
	f.pending++
	f.maxLead = max(f.maxLead, f.pending)
	f.mu.Unlock()
	f.ops <- func() {
		if f.delay > 0 {
			time.Sleep(f.delay)
		}
		copy(f.mem[dst:], src)
		f.mu.Lock()
		f.pending--
		f.mu.Unlock()
	}
	return nil
}

func (f *fakeDevice) Mark(i int) error {
	f.marked[i]++
	seq := f.marked[i]
	f.ops <- func() {
		f.mu.Lock()
		f.passed[i] = seq
		f.cond.Broadcast()
		f.mu.Unlock()
	}
	return nil
}

func (f *fakeDevice) Passed(i int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.passed[i] == f.marked[i]
}

func (f *fakeDevice) Wait(i int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.passed[i] != f.marked[i] {
		f.cond.Wait()
	}
	return nil
}

// newRing makes a ring of Go memory filled by Go's copy, whose writes the
// race detector sees (the vector fills are assembly: TestFill checks them,
// and TestRingCopy runs them too).
func newRing(slots, piece, workers int) *Ring {
	bufs := make([][]byte, slots)
	for i := range bufs {
		bufs[i] = make([]byte, piece)
	}
	r := New(bufs, workers)
	r.Fill = FillCopy
	return r
}

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestRingCopy: bytes arrive intact for lengths that are not multiples of
// the slot, over many more pieces than slots, with a slow engine (and Go's
// copy) and a fast one (and the default fill), and the slots' order carries
// over from one copy to the next.
func TestRingCopy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, delay := range []time.Duration{0, 20 * time.Microsecond} {
		r := newRing(4, 4096, 3)
		if delay == 0 {
			r.Fill = DefaultFill
		}
		f := newFakeDevice(t, 1<<20, 4)
		f.delay = delay
		for _, n := range []int{0, 1, 4095, 4096, 4097, 50000, 100003} {
			src := randomBytes(rng, n)
			clear(f.mem)
			r.ResetStats()
			require.NoError(t, r.Copy(t.Context(), f, Transfer{Dst: 64, Src: src}))
			require.Zero(t, r.Active(), "no fill runs after Copy returned")
			st := r.Stats()
			require.Equal(t, int64(ceilTo(n, 4096)/4096), st.Pieces, "%d bytes in 4 KiB slots", n)
			require.LessOrEqual(t, st.MaxFill, st.Fill)
			if n > 0 {
				require.Positive(t, st.Fill)
			}
			f.sync()
			require.Equal(t, src, f.mem[64:64+n], "%d bytes, engine delay %v", n, delay)
			require.Zero(t, f.mem[64+n], "nothing past the end")
		}
		f.stop()
	}
}

// TestStreamGroups: groups of staged and direct transfers, empty groups
// and ones of many pieces: the bytes arrive intact, each group's before
// runs after every copy of the groups before it and before its own first
// copy, and its after after its last copy and before the next group's
// before.
func TestStreamGroups(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	r := newRing(6, 8192, 4)
	r.MinPiece = 1024
	f := newFakeDevice(t, 1<<21, 6)
	sizes := [][]int{{30000, 3001}, {}, {1}, {8192 * 9, 0, 77}, {5000}, {}, {40000, 20000, 10}}
	const stride = 1 << 17
	var srcs [][][]byte
	s, err := r.Begin(t.Context(), f)
	require.NoError(t, err)
	for g, sz := range sizes {
		var ts []Transfer
		var group [][]byte
		at := uintptr(g * stride)
		for k, n := range sz {
			src := randomBytes(rng, n)
			group = append(group, src)
			ts = append(ts, Transfer{Dst: at, Src: src, Direct: k == 1}) // each group's second transfer is direct
			at += uintptr(n) + 128
		}
		srcs = append(srcs, group)
		require.NoError(t, s.Add(
			func() error { f.log = append(f.log, fmt.Sprintf("before %d", g)); return nil },
			func() error { f.log = append(f.log, fmt.Sprintf("after %d", g)); return nil },
			ts...))
	}
	require.NoError(t, s.Finish())
	s.Close()
	require.Zero(t, r.Active())
	f.sync()
	f.stop()
	for g, group := range srcs {
		at := g * stride
		for k, src := range group {
			require.Equal(t, src, f.mem[at:at+len(src)], "group %d transfer %d", g, k)
			at += len(src) + 128
		}
	}
	// The log's order: before g, g's copies, after g, for g in order.
	groupOf := func(line string) (kind string, g int) {
		var n int
		if _, err := fmt.Sscanf(line, "copy %d", &n); err == nil {
			return "copy", n / stride
		}
		_, err := fmt.Sscanf(line, "%s %d", &kind, &g)
		require.NoError(t, err, line)
		return kind, g
	}
	state, cur := "after", -1
	copies := make([]int, len(sizes))
	for _, line := range f.log {
		kind, g := groupOf(line)
		switch kind {
		case "before":
			require.Equal(t, "after", state, "%q follows the previous group's after", line)
			require.Equal(t, cur+1, g, "%q in order", line)
			state, cur = "before", g
		case "copy":
			require.Equal(t, "before", state, "a copy of group %d inside its group", g)
			require.Equal(t, cur, g, "a copy of group %d inside its group", g)
			copies[g]++
		case "after":
			require.Equal(t, "before", state)
			require.Equal(t, cur, g)
			state = "after"
		}
	}
	require.Equal(t, len(sizes)-1, cur, "every group ran")
	require.Equal(t, "after", state)
	for g, sz := range sizes {
		want := 0
		for k, n := range sz {
			switch {
			case n == 0:
			case k == 1:
				want++ // direct: one copy
			default:
				want += ceilTo(n, 8192) / 8192 // the slot or smaller pieces: at least this many
			}
		}
		require.GreaterOrEqual(t, copies[g], want, "group %d's copies", g)
	}
	require.Greater(t, f.maxLead, 1, "copies are enqueued ahead of the engine")
}

// cancelAfter is a context whose Err is nil for its first calls and then
// context.Canceled: a cancellation that lands while a copy is under way.
type cancelAfter struct {
	context.Context
	calls, after int
}

func (c *cancelAfter) Err() error {
	c.calls++
	if c.calls > c.after {
		return context.Canceled
	}
	return nil
}

// TestStreamCancel: a copy cancelled with pieces in flight returns
// context.Canceled with no fill still running, and the ring copies right
// afterwards.
func TestStreamCancel(t *testing.T) {
	r := newRing(8, 1024, 4)
	f := newFakeDevice(t, 1<<20, 8)
	defer f.stop()
	src := randomBytes(rand.New(rand.NewPCG(5, 6)), 256<<10) // 256 pieces: the context is asked at 0, 64, 128, 192
	for _, after := range []int{0, 1, 3} {
		err := r.Copy(&cancelAfter{Context: t.Context(), after: after}, f, Transfer{Src: src})
		require.ErrorIs(t, err, context.Canceled, "cancelled after %d checks", after)
		require.Zero(t, r.Active(), "no fill runs after the copy returned")
	}
	f.sync()
	require.NoError(t, r.Copy(t.Context(), f, Transfer{Src: src}))
	f.sync()
	require.Equal(t, src, f.mem[:len(src)])
}

// TestStreamErrors: a failed copy or group work ends the stream with that
// error (wrapped), later calls return it, no fill runs after Close, and the
// ring works afterwards; a second stream on an open ring, and a ring
// without room, are refused.
func TestStreamErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	r := newRing(4, 4096, 2)
	f := newFakeDevice(t, 1<<20, 4)
	defer f.stop()
	src := randomBytes(rng, 100000)

	f.failAt = 5
	err := r.Copy(t.Context(), f, Transfer{Src: src})
	require.ErrorContains(t, err, "injected copy failure")
	require.ErrorContains(t, err, "copying 4096 bytes to the device")
	require.Zero(t, r.Active())
	f.failAt = 0

	boom := errors.New("launch failed")
	for _, where := range []string{"before", "after"} {
		s, err := r.Begin(t.Context(), f)
		require.NoError(t, err)
		_, err = r.Begin(t.Context(), f)
		require.ErrorContains(t, err, "already open")
		fail := func() error { return boom }
		before, after := fail, (func() error)(nil)
		if where == "after" {
			before, after = nil, fail
		}
		err = s.Add(before, after, Transfer{Src: src[:10]})
		if err == nil {
			err = s.Finish()
		}
		require.ErrorIs(t, err, boom, where)
		require.ErrorIs(t, s.Add(nil, nil, Transfer{Src: src}), boom, "the stream stays failed")
		require.ErrorIs(t, s.Finish(), boom)
		s.Close()
		require.Zero(t, r.Active())
	}
	f.sync()
	clear(f.mem)
	r.MinPiece = 0 // taken as 1
	require.NoError(t, r.Copy(t.Context(), f, Transfer{Dst: 10, Src: src}))
	f.sync()
	require.Equal(t, src, f.mem[10:10+len(src)])

	_, err = New(nil, 4).Begin(t.Context(), f)
	require.ErrorContains(t, err, "no slots")
	_, err = New([][]byte{{}}, 4).Begin(t.Context(), f)
	require.ErrorContains(t, err, "empty")
}

// TestStreamPieces: a transfer of less than a slot per worker is cut into
// pieces of at least MinPiece (in MinPiece steps), so all workers fill it.
func TestStreamPieces(t *testing.T) {
	r := newRing(6, 256<<10, 4)
	r.MinPiece = 4096
	f := newFakeDevice(t, 8<<20, 6)
	defer f.stop()
	rng := rand.New(rand.NewPCG(9, 10))
	srcs := [][]byte{randomBytes(rng, 3<<20+5), randomBytes(rng, 100003), randomBytes(rng, 1)}
	ts := []Transfer{{Dst: 0, Src: srcs[0]}, {Dst: 4 << 20, Src: srcs[1]}, {Dst: 6 << 20, Src: srcs[2]}}
	require.NoError(t, r.Copy(t.Context(), f, ts...))
	require.Equal(t, 13+4+1, len(r.pieces), "3 MiB + 5 bytes in 256 KiB pieces, 100003 bytes in 28 KiB ones (a quarter, in 4 KiB steps), 1 byte")
	f.sync()
	for i, tr := range ts {
		require.Equal(t, srcs[i], f.mem[tr.Dst:int(tr.Dst)+len(tr.Src)], "transfer %d", i)
	}
}
