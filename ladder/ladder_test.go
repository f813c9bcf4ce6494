//go:build cuda

package ladder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/kernels"
)

var testDevice *Device

func TestMain(m *testing.M) {
	d, err := Open(0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ladder tests:", err)
		os.Exit(1)
	}
	testDevice = d
	code := m.Run()
	if err := d.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "ladder tests: closing the device:", err)
		code = 1
	}
	os.Exit(code)
}

// lengths are the input lengths of the tests: none a power of two but 1,
// small ones (a partial block, a partial 16-byte vector, a partial warp tile)
// and large ones (several passes of kernels 1 to 8, many blocks per SM).
var lengths = []int{1, 2, 3, 5, 7, 31, 33, 63, 65, 255, 257, 511, 1000, 1023, 1025, 4097, 65_537, 262_147,
	1<<20 + 3, 3_000_017, 1<<24 + 1001}

// testVariants is the ladder and, at other block sizes, kernels 1 to 6.
func testVariants() []Variant {
	vs := Variants(false)
	for _, b := range []int{kernels.LadderMinBlock, kernels.LadderMaxBlock} {
		for _, v := range []Variant{
			recursive("1", "", "ladder_v1", b, 1, false),
			recursive("2", "", "ladder_v2", b, 1, false),
			recursive("3", "", "ladder_v3", b, 1, false),
			recursive("4", "", "ladder_v4", b, 2, false),
			recursive("5", "", "ladder_v5", b, 2, false),
		} {
			v.ID = fmt.Sprintf("%s/block %d", v.ID, b)
			vs = append(vs, v)
		}
	}
	for _, b := range []int{64, 128, 512} { // the instantiations of ladder.cu beside 256
		v := v6(b)
		v.ID = fmt.Sprintf("6/block %d", b)
		vs = append(vs, v)
	}
	return vs
}

func fill(n int, x int32) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = x
	}
	return s
}

// TestVariants runs every variant twice on each input and checks both
// results against the host's (the sum, or kernel 12's operator folded in
// order): the second run checks that kernels 11 and 12 left their ticket at
// zero. Inputs of all-MaxInt32 and all-MinInt32 overflow any 32-bit
// accumulator.
func TestVariants(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	type input struct {
		name string
		data []int32
	}
	var inputs []input
	for i, n := range lengths {
		inputs = append(inputs, input{fmt.Sprintf("random %d", n), randomInt32(n, seed+uint64(i))})
	}
	inputs = append(inputs,
		input{"max 3000017", fill(3_000_017, math.MaxInt32)},
		input{"min 3000017", fill(3_000_017, math.MinInt32)},
		input{"min 65", fill(65, math.MinInt32)})
	vs := testVariants()
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			refs := map[string]checker{}
			for _, v := range vs {
				if refs[v.op.label()] == nil {
					refs[v.op.label()] = v.op.reference(in.data)
				}
			}
			err := testDevice.do(func() (err error) {
				ws, err := testDevice.newWorkspace(in.data, false)
				if err != nil {
					return err
				}
				defer func() { err = errors.Join(err, ws.free()) }()
				for _, v := range vs {
					for run := range 2 {
						_, launches, got, err := testDevice.reduce(ws, v)
						if err != nil {
							return fmt.Errorf("variant %s: %w", v.ID, err)
						}
						vd := refs[v.op.label()](got)
						assert.Truef(t, vd.ok, "variant %s (%s), run %d, %d launches: got %s, want %s", v.ID, v.Name,
							run+1, launches, vd.got, vd.want)
					}
				}
				return nil
			})
			require.NoError(t, err)
		})
	}
}

// TestReferencesSeeOrder checks that the non-commutative operators make the
// tests of kernel 12 sensitive to order (swapping two values or reversing
// the input changes the fold), and that the parallel host fold equals the
// sequential one.
func TestReferencesSeeOrder(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	data := randomInt32(1<<20+7, seed)
	for data[0] == data[1] || data[0] == data[len(data)-1] {
		data = randomInt32(len(data), seed+1)
		seed++
	}
	swapped := slices.Clone(data)
	swapped[0], swapped[1] = swapped[1], swapped[0]
	assert.NotEqual(t, mat2Op.fold(data), mat2Op.fold(swapped), "the matrix product does not see a swap")
	reversed := slices.Clone(data)
	slices.Reverse(reversed)
	assert.NotEqual(t, firstLastOp.fold(data), firstLastOp.fold(reversed), "first/last does not see the order")

	seq := mat2Op.identity
	for _, x := range data {
		seq = mat2Op.combine(seq, mat2Op.lift(x))
	}
	assert.Equal(t, seq, mat2Op.fold(data))
	var sum int64
	for _, x := range data {
		sum += int64(x)
	}
	assert.Equal(t, sum, sumOp.fold(data))
	assert.Equal(t, firstLast{data[0], data[len(data)-1], uint64(len(data))}, firstLastOp.fold(data))
}

// TestRun runs the whole ladder, the unsafe variant included, on a small
// input and checks the report and its table.
func TestRun(t *testing.T) {
	rep, err := Run(context.Background(), Config{N: 1_000_003, Reps: 3, Warmup: 1, Unsafe: true})
	require.NoError(t, err)
	vs := Variants(true)
	require.Len(t, rep.Rows, len(vs))
	assert.Greater(t, rep.CopyGBps, 0.0)
	assert.Empty(t, rep.Wrong())
	for i, row := range rep.Rows {
		assert.Equal(t, vs[i].ID, row.ID)
		assert.Positive(t, row.Time, "variant %s", row.ID)
		assert.Positive(t, row.Launches, "variant %s", row.ID)
		assert.InDelta(t, float64(rep.N)*4/row.Time.Seconds()/1e9, row.GBps, 1e-9*row.GBps, "variant %s", row.ID)
		if row.Unsafe {
			t.Logf("variant %s (%s) correct: %v %s %s", row.ID, row.Name, row.Correct, row.Got, row.Want)
		} else {
			assert.True(t, row.Correct, "variant %s: got %s, want %s", row.ID, row.Got, row.Want)
		}
	}
	assert.Equal(t, "1", rep.Rows[0].ID)
	assert.InDelta(t, 1.0, rep.Rows[0].Speedup, 1e-12)
	var b bytes.Buffer
	require.NoError(t, rep.WriteTable(&b))
	for _, v := range vs {
		assert.Contains(t, b.String(), "| "+v.ID+" ", "the table has no row %s", v.ID)
	}
	t.Log("\n" + b.String())
}

func TestRunCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, Config{N: 1000, Reps: 1})
	require.ErrorIs(t, err, context.Canceled)
}

func TestMainUsage(t *testing.T) {
	for _, args := range [][]string{{"--n", "0"}, {"--reps", "0"}, {"--bogus"}, {"extra"}} {
		var out, errOut bytes.Buffer
		assert.Equal(t, 2, Main(context.Background(), "ladder", args, &out, &errOut), "%v", args)
		assert.Empty(t, out.String())
		assert.NotEmpty(t, errOut.String())
	}
	var out, errOut bytes.Buffer
	assert.Equal(t, 0, Main(context.Background(), "ladder", []string{"--help"}, &out, &errOut))
	assert.Contains(t, out.String(), "--unsafe")
	assert.Empty(t, errOut.String())
}

func TestMainTable(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Main(context.Background(), "ladder", []string{"--n", "70001", "--reps", "2", "--seed", "7"}, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	assert.Contains(t, out.String(), "70001 random int32")
	assert.Contains(t, out.String(), "seed 7;")
	assert.Equal(t, len(Variants(false)), strings.Count(out.String(), "| yes"))
}
