package cpu

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/column"
)

func stringView(offs []int32, data string) *column.View {
	b := make([]byte, 0, 4*len(offs))
	for _, o := range offs {
		b = binary.LittleEndian.AppendUint32(b, uint32(o))
	}
	return &column.View{Type: column.TypeName("utf8"), Kind: column.Binary, Len: len(offs) - 1, Offsets: b, Values: []byte(data)}
}

// Keys of one string column: equal strings are one group, whatever their
// position; offsets out of order are an error, never a panic.
func TestStringKeys(t *testing.T) {
	v := stringView([]int32{0, 2, 4, 4, 6}, "abcdab")
	views := []*column.View{v}
	h := make([]uint64, 4)
	x := Hasher{}
	require.NoError(t, x.Hash(views, 0, 4, h))
	require.Equal(t, h[0], h[3])
	tbl := NewKeyTable(false)
	ids := make([]int32, 4)
	require.NoError(t, tbl.Find(views, []int32{0, 1, 2, 3}, h, ids))
	require.Equal(t, []int32{0, 1, 2, 0}, ids)
	require.Equal(t, 3, tbl.Len())
	// An encoded key travels and comes back to its group.
	fams := []column.Family{column.FamilyBytes}
	for g := range int32(3) {
		key := tbl.KeyBytes(g)
		require.NoError(t, CheckKey(false, fams, key))
		kh, err := KeyHash(false, key)
		require.NoError(t, err)
		require.Equal(t, g, tbl.FindKey(kh, key))
	}
	require.Error(t, CheckKey(false, fams, []byte{1, 9, 0, 0, 0, 'a'}))
	require.Error(t, CheckKey(false, fams, []byte{2}))

	bad := stringView([]int32{0, 4, 2, 6}, "abcdef")
	require.ErrorContains(t, x.Hash([]*column.View{bad}, 0, 3, h), "outside the 6 bytes")
	require.Error(t, tbl.Find([]*column.View{bad}, []int32{1}, h, ids))
}
