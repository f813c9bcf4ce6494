package agg

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/column"
)

// Groups of every family and aggregate set read back from their spill form
// are the same states; every truncation and a flipped count are errors,
// never a panic.
func TestGroupsSpillRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n, groups = 2000, 13
	fams := []column.Family{column.FamilySigned, column.FamilyUnsigned, column.FamilyFloat, column.FamilyBool, column.FamilyDecimal, column.FamilyBytes}
	for _, f := range fams {
		for _, set := range []Set{Default, Count | Min, Sum, Default | Ordered, Count} {
			g, err := NewGroups(f, set)
			require.NoError(t, err)
			g.Grow(groups)
			for i := range n {
				id := int32(r.IntN(groups - 1)) // (the last group stays empty)
				if r.IntN(8) == 0 {
					g.AddNull(id)
					continue
				}
				x := r.Int64() >> uint(r.IntN(64))
				switch f {
				case column.FamilySigned:
					g.AddSigned(id, -x, int64(i))
				case column.FamilyUnsigned:
					g.AddUnsigned(id, uint64(x), int64(i))
				case column.FamilyFloat:
					g.AddFloat(id, float64(x)/3, int64(i))
				case column.FamilyBool:
					g.AddBool(id, x&1 == 1, int64(i))
				case column.FamilyDecimal:
					g.AddDecimal(id, uint64(x), uint64(-(x & 1)), int64(i))
				case column.FamilyBytes:
					g.AddBytes(id, []byte("v")[:r.IntN(2)], int64(i)) // (empty strings too)
				}
			}
			b := g.AppendSpill([]byte("x"))[1:]
			back, err := NewGroups(f, set)
			require.NoError(t, err)
			rest, err := back.ReadSpill(append(b, 7))
			require.NoError(t, err, "%v %v", f, set)
			require.Equal(t, []byte{7}, rest)
			require.Equal(t, g.Len(), back.Len())
			for i := range int32(groups) {
				want, got := g.State(i), back.State(i)
				wb, err := want.MarshalBinary()
				require.NoError(t, err)
				gb, err := got.MarshalBinary()
				require.NoError(t, err)
				require.Equal(t, wb, gb, "%v %v group %d", f, set, i)
			}
			for cut := range len(b) {
				fresh, _ := NewGroups(f, set)
				_, err := fresh.ReadSpill(b[:cut])
				require.Error(t, err, "%v %v cut at %d of %d", f, set, cut, len(b))
				require.Zero(t, fresh.Len())
			}
			fresh, _ := NewGroups(f, set)
			bad := append([]byte{}, b...)
			bad[0]++ // (one group more than the arrays hold)
			_, err = fresh.ReadSpill(bad)
			require.Error(t, err)
		}
	}
}
