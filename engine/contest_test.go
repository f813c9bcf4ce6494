package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/arrowagg/arrowagg/planner"
	"github.com/stretchr/testify/require"
)

// contested is a record of one int64 column of 300 KB (the CPU's estimate
// ~31 µs, the GPU's ~20 µs: contested) made resident on an auto engine's
// fake device whose updates take delay longer, and the CPU engine's answer;
// the test's cleanup frees it all and checks the allocator.
type contested struct {
	mem  *memory.CheckedAllocator
	f    *fakeResidentGPU
	rz   *Residency
	res  *Resident
	rec  arrow.Record
	want []Result
}

func newContested(t *testing.T, delay time.Duration) contested {
	r, _ := seeded(t)
	ctx := context.Background()
	c := contested{mem: memory.NewCheckedAllocator(memory.NewGoAllocator()), f: newFakeResident()}
	t.Cleanup(func() { c.mem.AssertSize(t, 0) })
	c.rec = int64Record(c.mem, r, 37500)
	t.Cleanup(c.rec.Release)
	var err error
	c.want, err = cpuEngine(t, c.mem, 1).AggregateRecord(ctx, c.rec, Request{})
	require.NoError(t, err)
	c.f.delay.Store(int64(delay))
	c.rz, err = residentEngine(t, c.f, c.mem, DeviceAuto).NewResidency(1 << 20)
	require.NoError(t, err)
	t.Cleanup(func() { c.rz.Close() })
	c.res, err = c.rz.UploadRecord(ctx, c.rec)
	require.NoError(t, err)
	t.Cleanup(c.res.Release)
	return c
}

// TestResidencyContest: a resident column whose estimates are too close to
// call goes to the faster backend by measurement. With a slow device (a
// delay in every device update) its calls settle on the host copy after
// the probes, but for rechecks; every answer equals the CPU engine's; the
// plan says why.
func TestResidencyContest(t *testing.T) {
	ctx := context.Background()
	c := newContested(t, 3*time.Millisecond)
	f, rz, res, rec, want, mem := c.f, c.rz, c.res, c.rec, c.want, c.mem
	require.Equal(t, int64(1), f.uploads.Load(), "a contested column is uploaded")

	var where []string
	const calls = 2 * planner.ContestRecheck
	for i := 1; i <= calls; i++ {
		got, plan, err := res.Aggregate(ctx, Request{})
		require.NoError(t, err)
		requireSameResults(t, want, got, "contested column")
		require.Contains(t, plan[0].Reason, "contested")
		where = append(where, plan[0].LocationName())
		if i > 2*planner.ContestProbe && i%planner.ContestRecheck != 0 {
			require.Equal(t, "host", plan[0].LocationName(), "call %d: the faster CPU", i)
			require.Equal(t, "cpu", plan[0].BackendName())
			require.Contains(t, plan[0].Reason, "the CPU on the host copy")
		}
	}
	require.Equal(t, []string{"device", "host", "device", "host"}, where[:2*planner.ContestProbe], "the probes")
	require.Equal(t, "device", where[planner.ContestRecheck-1], "a recheck of the GPU")
	st := rz.Stats()
	require.Equal(t, int64(calls), st.Hits+st.HostUses)
	require.Equal(t, int64(2+calls/planner.ContestRecheck), st.Hits)

	// Forced devices never contest.
	g := newFakeResident()
	eg := residentEngine(t, g, mem, DeviceGPU)
	rzg, err := eg.NewResidency(1 << 20)
	require.NoError(t, err)
	defer rzg.Close()
	resg, err := rzg.UploadRecord(ctx, rec)
	require.NoError(t, err)
	defer resg.Release()
	_, plan, err := resg.Aggregate(ctx, Request{})
	require.NoError(t, err)
	require.Equal(t, "device", plan[0].LocationName())
	require.NotContains(t, plan[0].Reason, "contested")
}

// TestResidencyContestConcurrent: many goroutines aggregating one contested
// column at once (run with -race) all get the CPU engine's answer, and every
// call is counted once, on the device or on the host.
func TestResidencyContestConcurrent(t *testing.T) {
	ctx := context.Background()
	c := newContested(t, 200*time.Microsecond)
	f, rz, res, want := c.f, c.rz, c.res, c.want

	const goroutines, calls = 8, 12
	errs := make(chan error, goroutines)
	for range goroutines {
		go func() {
			for range calls {
				got, plan, err := res.Aggregate(ctx, Request{})
				if err != nil {
					errs <- err
					return
				}
				if d := resultsDiff(want, got); d != "" || !strings.Contains(plan[0].Reason, "contested") {
					errs <- fmt.Errorf("on the %s: %s, plan %q", plan[0].LocationName(), d, plan[0].Reason)
					return
				}
			}
			errs <- nil
		}()
	}
	for range goroutines {
		require.NoError(t, <-errs)
	}
	st := rz.Stats()
	require.Equal(t, int64(goroutines*calls), st.Hits+st.HostUses)
	require.Equal(t, int64(1), f.uploads.Load())
}
