package cpu

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
)

// A state asked for count and null_count alone is folded from the validity
// bitmap: the values are never read. The view below has no values buffer at
// all, which any read of a value would trip over.
func TestCountsReadOnlyValidity(t *testing.T) {
	const n = 3*MorselSize + 77
	valid := make([]byte, (n+7)/8+1)
	rng := rand.New(rand.NewPCG(1, 2))
	want := int64(0)
	for i := 0; i < n; i++ {
		if rng.IntN(10) != 0 {
			valid[(i+3)/8] |= 1 << ((i + 3) % 8)
			want++
		}
	}
	for _, k := range []column.Kind{column.Int64, column.Float64, column.Decimal128, column.Binary, column.Bool} {
		v := column.View{Kind: k, Len: n, Validity: valid, ValidityOffset: 3}
		s := agg.New(k.Family(), agg.Count|agg.NullCount)
		cpu := &CPU{Threads: 3}
		require.NoError(t, cpu.Update(context.Background(), []*column.View{&v}, []*agg.State{&s}), "%s", k)
		require.Equal(t, want, s.Count, "%s", k)
		require.Equal(t, int64(n)-want, s.NullCount, "%s", k)
		require.Equal(t, agg.Count|agg.NullCount, s.Tracks)
	}
}
