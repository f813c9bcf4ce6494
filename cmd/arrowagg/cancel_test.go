package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// endlessStream returns the start of an Arrow IPC stream (its schema and a
// batch of rows rows) and a batch message that may follow it any number of
// times: a stream that never ends.
func endlessStream(t testing.TB, rows int) (head, batch []byte) {
	t.Helper()
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	fb := array.NewFloat64Builder(memory.DefaultAllocator)
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	defer ib.Release()
	defer fb.Release()
	defer sb.Release()
	for i := 0; i < rows; i++ {
		if i%9 == 0 {
			ib.AppendNull()
		} else {
			ib.Append(int64(i) * 1_000_003)
		}
		fb.Append(float64(i%977) / 8)
		sb.Append(fmt.Sprintf("w%05d", i%50_000))
	}
	cols := []arrow.Array{ib.NewArray(), fb.NewArray(), sb.NewArray()}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "x", Type: arrow.PrimitiveTypes.Float64},
		{Name: "w", Type: arrow.BinaryTypes.String},
	}, nil)
	rec := array.NewRecord(schema, cols, int64(rows))
	defer rec.Release()
	for _, c := range cols {
		c.Release()
	}
	stream := func(batches int) []byte {
		var b bytes.Buffer
		w := ipc.NewWriter(&b, ipc.WithSchema(schema))
		for range batches {
			require.NoError(t, w.Write(rec))
		}
		require.NoError(t, w.Close())
		return b.Bytes()
	}
	one, two := stream(1), stream(2)
	const eos = 8 // the end-of-stream marker
	return one[:len(one)-eos], two[len(one)-eos : len(two)-eos]
}

// streamArgs are the arguments of the command reading standard input.
var streamArgs = []string{"-f", "json", "--device", "cpu", "-"}

// interruptMidStream runs cmd (the command on standard input) on an endless
// stream piped into it, sends SIGINT once at bytes are written, and returns
// the time from the signal to the end of the process, and what it printed.
// ctx is cmd's context.
func interruptMidStream(ctx context.Context, t testing.TB, cmd *exec.Cmd, head, batch []byte, at int64) (time.Duration, *exec.ExitError, string, string) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	var written atomic.Int64
	reached := make(chan struct{})
	var once sync.Once
	go func() {
		defer stdin.Close()
		defer once.Do(func() { close(reached) }) // the command ended first: the test fails below
		n, err := stdin.Write(head)
		written.Add(int64(n))
		for err == nil {
			if written.Load() >= at {
				once.Do(func() { close(reached) })
			}
			n, err = stdin.Write(batch)
			written.Add(int64(n))
		}
	}()
	<-reached
	if written.Load() < at {
		err := cmd.Wait()
		t.Fatalf("the command ended (%v) before the signal: %s", err, stderr.String())
	}
	t0 := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err = cmd.Wait()
	took := time.Since(t0)
	require.NoError(t, ctx.Err(), "the command did not stop")
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	return took, exit, stdout.String(), stderr.String()
}

// SIGINT while batches stream in and are aggregated: exit status 130, the
// one-line message, no output.
func TestSIGINTMidStream(t *testing.T) {
	head, batch := endlessStream(t, 1<<16)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, exit, stdout, stderr := interruptMidStream(ctx, t, command(ctx, t, streamArgs...), head, batch, 32<<20)
	assert.Equal(t, exitInterrupted, exit.ExitCode())
	assert.Empty(t, stdout)
	assert.Equal(t, "arrowagg: interrupted\n", stderr)
}

// BenchmarkInterrupt measures, for the command reading an endless Arrow IPC
// stream from standard input (batches of 1M rows: int64, float64, string),
// the time from SIGINT, sent after 64 MiB to 512 MiB of input, to the end of
// the process: ms-to-stop is the mean, worst-ms-to-stop the worst. ns/op is
// left out: it is not the latency.
func BenchmarkInterrupt(b *testing.B) {
	head, batch := endlessStream(b, 1<<20)
	self, err := os.Executable()
	require.NoError(b, err)
	var total, worst time.Duration
	for i := 0; i < b.N; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		// The test binary itself, run as the command (command() is for tests).
		cmd := exec.CommandContext(ctx, self, streamArgs...)
		cmd.Env = append(os.Environ(), runMainEnv+"=1")
		took, exit, _, _ := interruptMidStream(ctx, b, cmd, head, batch, int64(64+64*(i%8))<<20)
		cancel()
		if exit.ExitCode() != exitInterrupted {
			b.Fatalf("exit status %d", exit.ExitCode())
		}
		total += took
		worst = max(worst, took)
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(total.Microseconds())/1e3/float64(b.N), "ms-to-stop")
	b.ReportMetric(float64(worst.Microseconds())/1e3, "worst-ms-to-stop")
}
