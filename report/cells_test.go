package report

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"
)

// The cells written straight into the buffer (directCell) are those the
// values print (cellOf, then json or csvField), in both forms, for random
// numbers of every width, nulls, the extremes and the special floats.
func TestDirectCellsAsValues(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(4, 2))
	const n = 3000
	i64, i32 := array.NewInt64Builder(mem), array.NewInt32Builder(mem)
	u64, f64 := array.NewUint64Builder(mem), array.NewFloat64Builder(mem)
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), math.MaxFloat64, math.SmallestNonzeroFloat64, 1e16, 1e-5, 123456789012345678}
	for k := range n {
		if k%17 == 0 {
			i64.AppendNull()
			i32.AppendNull()
			u64.AppendNull()
			f64.AppendNull()
			continue
		}
		x := r.Int64() >> r.IntN(64)
		switch k % 97 {
		case 1:
			x = math.MinInt64
		case 2:
			x = math.MaxInt64
		}
		i64.Append(x)
		i32.Append(int32(x))
		u64.Append(uint64(x) * 3)
		f := float64(x) / float64(1+r.IntN(1000)) * math.Pow(10, float64(r.IntN(60)-30))
		if k%11 == 0 {
			f = specials[r.IntN(len(specials))]
		}
		f64.Append(f)
	}
	for _, b := range []array.Builder{i64, i32, u64, f64} {
		col := b.NewArray()
		b.Release()
		for _, json := range []bool{false, true} {
			direct := directCell(col, col.DataType(), json)
			require.NotNil(t, direct, "%s", col.DataType())
			at := cellOf(col, col.DataType())
			var got bytes.Buffer
			for i := range col.Len() {
				got.Reset()
				require.NoError(t, direct(&got, i))
				v, err := at(i)
				require.NoError(t, err)
				want := csvField(v)
				if json {
					want = v.json()
				}
				require.Equal(t, want, got.String(), "%s row %d json %v", col.DataType(), i, json)
			}
		}
		col.Release()
	}
	// Other columns are left to their values.
	ts := array.NewInt64Builder(mem)
	ts.Append(1)
	a := ts.NewArray()
	defer a.Release()
	ts.Release()
	require.Nil(t, directCell(a, &arrow.TimestampType{Unit: arrow.Second}, false))
}

// formatRows writes the rows in order across many windows (each written
// while the next is formatted), and stops at the first error of its
// writer or of a row.
func TestFormatRowsWindows(t *testing.T) {
	n := 5*2*runtime.GOMAXPROCS(0)*16384 + 123 // (five windows and a bit)
	line := func(b *bytes.Buffer, i int) error {
		b.Write(strconv.AppendInt(b.AvailableBuffer(), int64(i), 10))
		b.WriteByte('\n')
		return nil
	}
	var want bytes.Buffer
	for i := range n {
		require.NoError(t, line(&want, i))
	}
	var got bytes.Buffer
	require.NoError(t, formatRows(&got, n, line))
	require.Equal(t, want.Len(), got.Len())
	require.True(t, bytes.Equal(want.Bytes(), got.Bytes()))

	w := &failingWriter{after: 3}
	require.ErrorIs(t, formatRows(w, n, line), errWrite)
	require.Equal(t, 4, w.calls, "no write after the failing one")
	bad := errors.New("a bad row")
	require.ErrorIs(t, formatRows(io.Discard, n, func(b *bytes.Buffer, i int) error {
		if i == n-5 {
			return bad
		}
		return line(b, i)
	}), bad)
}

var errWrite = errors.New("disk full")

// failingWriter fails every write after its first after ones.
type failingWriter struct{ after, calls int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.calls++
	if w.calls > w.after {
		return 0, errWrite
	}
	return len(p), nil
}
