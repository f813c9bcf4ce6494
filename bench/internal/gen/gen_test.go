package gen

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"20GiB": 20 << 30, "1.5G": 3 << 29, "512MiB": 512 << 20, "4096": 4096} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1GiB", "lots", "1e30GiB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q): no error", in)
		}
	}
}

// TestOrdered: batches arrive in order whatever the workers, and every
// batch made is released, when all are used, when use stops early, when it
// fails and when the context ends.
func TestOrdered(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int64}}, nil)
	stop := errors.New("stop")
	for _, tc := range []struct {
		name     string
		n, until int // use is done (or fails, or cancels) at batch until
		fail     bool
		cancel   bool
		want     error
	}{
		{"all", 50, -1, false, false, nil},
		{"done early", -1, 20, false, false, nil},
		{"use fails", 50, 10, true, false, stop},
		{"cancelled", -1, 15, false, true, context.Canceled},
	} {
		for _, workers := range []int{1, 3, 8} {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			ctx, cancel := context.WithCancel(context.Background())
			gen := func(i int) arrow.Record {
				b := array.NewInt64Builder(mem)
				defer b.Release()
				b.Append(int64(i))
				arr := b.NewArray()
				defer arr.Release()
				return array.NewRecord(schema, []arrow.Array{arr}, 1)
			}
			next := 0
			err := Ordered(ctx, workers, tc.n, gen, func(i int, rec arrow.Record) (bool, error) {
				defer rec.Release()
				if i != next || rec.Column(0).(*array.Int64).Value(0) != int64(i) {
					t.Fatalf("%s, %d workers: batch %d arrived as %d", tc.name, workers, i, next)
				}
				next++
				if i == tc.until {
					switch {
					case tc.fail:
						return false, stop
					case tc.cancel:
						cancel()
						return false, nil
					}
					return true, nil
				}
				return false, nil
			})
			cancel()
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("%s, %d workers: error %v, want %v", tc.name, workers, err, tc.want)
			}
			if tc.n > 0 && tc.until < 0 && next != tc.n {
				t.Errorf("%s, %d workers: %d batches used, want %d", tc.name, workers, next, tc.n)
			}
			mem.AssertSize(t, 0)
		}
	}
}
