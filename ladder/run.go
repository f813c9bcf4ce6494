//go:build cuda

package ladder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/arrowagg/arrowagg/internal/cudrv"
	"github.com/arrowagg/arrowagg/kernels"
)

// DefaultN is the default input length: 2^28 int32 (1 GiB) and a few more,
// so that no variant sees a power of two.
const DefaultN = 1<<28 + 12345

// Config chooses what Run measures.
type Config struct {
	N      int    // input length, 1 to 2^32-1 int32 values
	Reps   int    // timed repetitions of each variant (the median is reported)
	Warmup int    // untimed repetitions before them
	Unsafe bool   // also run variant 5 without __syncwarp (5u)
	Seed   uint64 // of the random input; 0 picks one from the clock
	Device int    // GPU ordinal
}

// Row is the measurement of one variant.
type Row struct {
	ID, Name string
	Unsafe   bool
	Launches int           // kernel launches per reduction
	Time     time.Duration // median over the repetitions
	GBps     float64       // input bytes / Time, in 10^9 bytes per second
	OfCopy   float64       // GBps over the copy's GB/s
	Speedup  float64       // variant 1's Time / Time
	Correct  bool          // every repetition gave the reference's result
	Got      string        // the first wrong result, when not Correct
	Want     string        // the reference, when not Correct
}

// Report is the outcome of Run.
type Report struct {
	Device   DeviceInfo
	Date     time.Time
	N        int
	Reps     int
	Seed     uint64
	Copy     time.Duration // median device-to-device copy of the input
	CopyGBps float64       // (bytes read + bytes written) / Copy
	Rows     []Row
}

// validate reports a Config that Run cannot measure.
func (c Config) validate() error {
	if c.N < 1 || uint64(c.N) >= 1<<32 {
		return fmt.Errorf("n = %d: want 1 to 2^32-1 elements", c.N)
	}
	if c.Reps < 1 || c.Warmup < 0 {
		return fmt.Errorf("%d repetitions and %d warm-ups: want at least 1 and 0", c.Reps, c.Warmup)
	}
	return nil
}

// Run generates cfg.N random int32 values, runs every variant cfg.Reps
// times on GPU cfg.Device and checks each result against the host's.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("ladder: %w", err)
	}
	if cfg.Seed == 0 {
		cfg.Seed = uint64(time.Now().UnixNano()) | 1
	}
	data := randomInt32(cfg.N, cfg.Seed)
	variants := Variants(cfg.Unsafe)
	refs := map[string]checker{} // by operator
	for _, v := range variants {
		if refs[v.op.label()] == nil {
			refs[v.op.label()] = v.op.reference(data)
		}
	}
	rep := &Report{Date: time.Now().UTC(), N: cfg.N, Reps: cfg.Reps, Seed: cfg.Seed}

	d, err := Open(cfg.Device)
	if err != nil {
		return nil, fmt.Errorf("ladder: %w", err)
	}
	rep.Device = d.Info()
	err = d.do(func() (err error) {
		ws, err := d.newWorkspace(data, true)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, ws.free()) }()
		bytes := float64(ws.n * 4)
		copyMs, err := d.timeCopy(ctx, ws, cfg.Warmup, cfg.Reps)
		if err != nil {
			return err
		}
		rep.Copy = msDuration(copyMs)
		rep.CopyGBps = 2 * bytes / copyMs / 1e6
		for _, v := range variants {
			row, err := d.measure(ctx, ws, v, refs[v.op.label()], cfg.Warmup, cfg.Reps)
			if err != nil {
				return fmt.Errorf("variant %s (%s): %w", v.ID, v.Name, err)
			}
			rep.Rows = append(rep.Rows, row)
		}
		return nil
	})
	err = errors.Join(err, d.Close())
	if err != nil {
		return nil, fmt.Errorf("ladder: %w", err)
	}
	var base time.Duration
	for _, r := range rep.Rows {
		if r.ID == "1" {
			base = r.Time
		}
	}
	for i := range rep.Rows {
		r := &rep.Rows[i]
		sec := r.Time.Seconds()
		r.GBps = float64(cfg.N) * 4 / sec / 1e9
		r.OfCopy = r.GBps / rep.CopyGBps
		r.Speedup = base.Seconds() / sec
	}
	return rep, nil
}

// randomInt32 returns n values drawn uniformly from all of int32, the same
// for the same seed on any machine (chunks of 2^20 with seeds of their own,
// filled in parallel).
func randomInt32(n int, seed uint64) []int32 {
	const chunk = 1 << 20
	data := make([]int32, n)
	chunks := (n + chunk - 1) / chunk
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for c := range chunks {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			r := rand.New(rand.NewPCG(seed, uint64(c)))
			part := data[c*chunk : min(n, (c+1)*chunk)]
			for i := range part {
				part[i] = int32(r.Uint32())
			}
		})
	}
	wg.Wait()
	return data
}

// timeCopy returns the median time in milliseconds of a device-to-device
// copy of the input. On the device thread.
func (d *Device) timeCopy(ctx context.Context, ws *workspace, warmup, reps int) (float64, error) {
	var times []float64
	for r := range warmup + reps {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		ms, err := d.timed(func() error {
			return cudrv.MemcpyDtoDAsync(ws.copyDst.ptr, ws.in.ptr, int64(ws.n*4), d.stream)
		})
		if err != nil {
			return 0, fmt.Errorf("timing a device-to-device copy of %d bytes: %w", ws.n*4, err)
		}
		if r >= warmup {
			times = append(times, ms)
		}
	}
	return median(times), nil
}

// timed returns the milliseconds between events recorded around what
// enqueue puts on the stream, once it is done.
func (d *Device) timed(enqueue func() error) (float64, error) {
	if err := d.start.Record(d.stream); err != nil {
		return 0, fmt.Errorf("recording an event: %w", err)
	}
	if err := enqueue(); err != nil {
		return 0, err
	}
	if err := d.stop.Record(d.stream); err != nil {
		return 0, fmt.Errorf("recording an event: %w", err)
	}
	if err := d.stop.Synchronize(); err != nil {
		return 0, fmt.Errorf("waiting for the GPU: %w", err)
	}
	ms, err := d.start.Elapsed(d.stop)
	if err != nil {
		return 0, fmt.Errorf("reading the events: %w", err)
	}
	return ms, nil
}

// reduce runs v once on ws and returns its result and launch count; before
// it, the result buffer is filled with a pattern, so that a kernel that
// writes nothing is caught. On the device thread.
func (d *Device) reduce(ws *workspace, v Variant) (ms float64, launches int, result []byte, err error) {
	if err := cudrv.MemsetD32Async(ws.out.ptr, 0xa5a5a5a5, kernels.LadderMaxStateBytes/4, d.stream); err != nil {
		return 0, 0, nil, fmt.Errorf("poisoning the result: %w", err)
	}
	var read func() ([]byte, error)
	ms, err = d.timed(func() (err error) {
		launches, read, err = v.enqueue(d, ws)
		return err
	})
	if err != nil {
		return 0, launches, nil, err
	}
	result, err = read()
	return ms, launches, result, err
}

// measure times v and checks every repetition's result. On the device
// thread.
func (d *Device) measure(ctx context.Context, ws *workspace, v Variant, check checker, warmup, reps int) (Row, error) {
	row := Row{ID: v.ID, Name: v.Name, Unsafe: v.Unsafe, Correct: true}
	var times []float64
	for r := range warmup + reps {
		if err := ctx.Err(); err != nil {
			return row, err
		}
		ms, launches, got, err := d.reduce(ws, v)
		if err != nil {
			return row, err
		}
		row.Launches = launches
		if vd := check(got); !vd.ok && row.Correct {
			row.Correct, row.Got, row.Want = false, vd.got, vd.want
		}
		if r >= warmup {
			times = append(times, ms)
		}
	}
	row.Time = msDuration(median(times))
	return row, nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// WriteTable prints the report: a header, then a Markdown table.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "reduction ladder on %s, %s\n", r.Device, r.Date.Format(time.RFC3339))
	fmt.Fprintf(&b, "input: %d random int32 (%.3f GB), seed %d; median of %d runs, CUDA events\n", r.N,
		float64(r.N)*4/1e9, r.Seed, r.Reps)
	fmt.Fprintf(&b, "device-to-device copy of the input: %.4f ms, %.1f GB/s (bytes read + written)\n",
		float64(r.Copy)/float64(time.Millisecond), r.CopyGBps)
	fmt.Fprintf(&b, "GB/s: input bytes / time; times exclude reading the result back, except 13's copy of its last partials\n\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 1, ' ', 0)
	fmt.Fprintln(tw, "| #\t| variant\t| kernels\t| time (ms)\t| GB/s\t| % of copy\t| speedup\t| correct\t|")
	fmt.Fprintln(tw, "|---\t|---\t|--:\t|--:\t|--:\t|--:\t|--:\t|---\t|")
	for _, row := range r.Rows {
		ok := "yes"
		if !row.Correct {
			ok = fmt.Sprintf("no: got %s, want %s", row.Got, row.Want)
		}
		fmt.Fprintf(tw, "| %s\t| %s\t| %d\t| %.4f\t| %.1f\t| %.1f%%\t| %.2fx\t| %s\t|\n", row.ID, row.Name, row.Launches,
			float64(row.Time)/float64(time.Millisecond), row.GBps, 100*row.OfCopy, row.Speedup, ok)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Wrong lists the variants, safe ones only, whose result was wrong.
func (r *Report) Wrong() []string {
	var ids []string
	for _, row := range r.Rows {
		if !row.Correct && !row.Unsafe {
			ids = append(ids, row.ID)
		}
	}
	return ids
}

// Main is the ladder's command line, `prog [--n N] [--reps R] [--unsafe]
// [--seed S] [--device D]`: it prints the table on stdout and returns the exit
// status: 0, 1 when it failed or a (safe) variant was wrong, 2 on bad usage.
func Main(ctx context.Context, prog string, args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet(prog, pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are printed below, help on stdout
	fs.SortFlags = false
	cfg := Config{}
	fs.IntVar(&cfg.N, "n", DefaultN, "number of int32 values to sum")
	fs.IntVar(&cfg.Reps, "reps", 20, "timed repetitions of each variant (the median is printed)")
	fs.IntVar(&cfg.Warmup, "warmup", 2, "untimed repetitions before them")
	fs.BoolVar(&cfg.Unsafe, "unsafe", false, "also run variant 5 with the classic volatile-only last warp (no __syncwarp)")
	fs.Uint64Var(&cfg.Seed, "seed", 0, "seed of the random input (0: from the clock)")
	fs.IntVar(&cfg.Device, "device", 0, "GPU ordinal")
	help := fs.BoolP("help", "h", false, "print this help and exit")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "%s: %v (see %s --help)\n", prog, err, prog)
		return 2
	}
	if *help {
		fmt.Fprintf(stdout, "usage: %s [flags]\n\nRuns, verifies and times the reduction ladder on the GPU.\n\n%s", prog,
			fs.FlagUsages())
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected arguments: %s\n", prog, strings.Join(fs.Args(), " "))
		return 2
	}
	if err := cfg.validate(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 2
	}
	rep, err := Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		if errors.Is(err, context.Canceled) {
			return 130
		}
		return 1
	}
	if err := rep.WriteTable(stdout); err != nil {
		fmt.Fprintf(stderr, "%s: writing the table: %v\n", prog, err)
		return 1
	}
	if wrong := rep.Wrong(); len(wrong) > 0 {
		fmt.Fprintf(stderr, "%s: wrong results from variant(s) %s\n", prog, strings.Join(wrong, ", "))
		return 1
	}
	return 0
}
