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
			g := fillGroups(t, r, f, set, n, groups)
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
