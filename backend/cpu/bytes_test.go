package cpu

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
)

// bytesView is a string view of the values (offsets int32, or int64 when
// large), every value valid.
func bytesView(vals [][]byte, large bool) column.View {
	var data []byte
	offs := make([]int64, 0, len(vals)+1)
	offs = append(offs, 0)
	for _, v := range vals {
		data = append(data, v...)
		offs = append(offs, int64(len(data)))
	}
	var ob []byte
	if large {
		for _, o := range offs {
			ob = binary.LittleEndian.AppendUint64(ob, uint64(o))
		}
	} else {
		for _, o := range offs {
			ob = binary.LittleEndian.AppendUint32(ob, uint32(o))
		}
	}
	k := column.Binary
	if large {
		k = column.LargeBinary
	}
	return column.View{Kind: k, Len: len(vals), Values: data, Offsets: ob}
}

// The bytewise extremes, with the prefix-key shortcut, equal a plain scan's
// on values built to tie in their first 8 bytes, be prefixes of each other,
// hold zero bytes and end at the very end of the data buffer.
func TestBytesExtremesMatchScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	alphabet := []byte{0, 1, 'a', 'b', 0xff}
	for round := 0; round < 300; round++ {
		n := 1 + rng.IntN(3*MorselSize/2)
		if round%3 != 0 {
			n = 1 + rng.IntN(200)
		}
		vals := make([][]byte, n)
		for i := range vals {
			l := rng.IntN(14)
			v := make([]byte, l)
			for j := range v {
				v[j] = alphabet[rng.IntN(len(alphabet))]
			}
			if rng.IntN(4) == 0 && i > 0 { // a prefix or an extension of another
				p := vals[rng.IntN(i)]
				v = append(append([]byte{}, p[:rng.IntN(len(p)+1)]...), v[:rng.IntN(len(v)+1)]...)
			}
			vals[i] = v
		}
		lo, hi := vals[0], vals[0]
		for _, v := range vals {
			if bytes.Compare(v, lo) < 0 {
				lo = v
			}
			if bytes.Compare(v, hi) > 0 {
				hi = v
			}
		}
		want := agg.Bytes(int64(n), 0, lo, hi)
		for _, large := range []bool{false, true} {
			v := bytesView(vals, large)
			s := agg.New(column.FamilyBytes, 0)
			cpu := &CPU{Threads: 2}
			require.NoError(t, cpu.Update(context.Background(), []*column.View{&v}, []*agg.State{&s}))
			require.Equal(t, string(want.BMin), string(s.BMin), "round %d min", round)
			require.Equal(t, string(want.BMax), string(s.BMax), "round %d max", round)
		}
		// and with nulls (the sparse path): the extremes of the valid values
		valid := make([]byte, (n+7)/8)
		var vlo, vhi []byte
		seen := false
		for i, v := range vals {
			if rng.IntN(5) == 0 {
				continue
			}
			valid[i/8] |= 1 << (i % 8)
			if !seen || bytes.Compare(v, vlo) < 0 {
				vlo = v
			}
			if !seen || bytes.Compare(v, vhi) > 0 {
				vhi = v
			}
			seen = true
		}
		v := bytesView(vals, round%2 == 0)
		v.Validity = valid
		s := agg.New(column.FamilyBytes, 0)
		cpu := &CPU{Threads: 2}
		require.NoError(t, cpu.Update(context.Background(), []*column.View{&v}, []*agg.State{&s}))
		if seen {
			require.Equal(t, string(vlo), string(s.BMin), "round %d min with nulls", round)
			require.Equal(t, string(vhi), string(s.BMax), "round %d max with nulls", round)
		} else {
			require.Zero(t, s.Count)
		}
	}
}

func TestPrefixKeyOrders(t *testing.T) {
	vals := [][]byte{{}, {0}, {0, 0}, {1}, {'a'}, {'a', 0}, []byte("abcdefgh"), []byte("abcdefgh\x00"), []byte("abcdefgi"), {0xff}}
	for i := range vals {
		for j := range vals {
			data := append(append([]byte{}, vals[i]...), vals[j]...)
			ki := prefixKey(data, 0, int64(len(vals[i])))
			kj := prefixKey(data, int64(len(vals[i])), int64(len(data)))
			c := bytes.Compare(vals[i], vals[j])
			if ki < kj {
				require.Equal(t, -1, c, "%q %q", vals[i], vals[j])
			}
			if ki > kj {
				require.Equal(t, 1, c, "%q %q", vals[i], vals[j])
			}
		}
	}
}

// A dictionary's values are visited one at a time, in index order (dictAcc
// calls dense(j, j+1)): the last value of the dictionary included.
func TestBytesOneAtATime(t *testing.T) {
	vals := [][]byte{[]byte("kiwi"), []byte("apple"), []byte("zucchini"), []byte("fig")}
	v := bytesView(vals, false)
	for _, order := range [][]int{{3, 2, 1, 0}, {0, 1, 2, 3}, {3}, {2, 3}} {
		acc := bytesAcc{v: &v}
		for _, j := range order {
			acc.dense(j, j+1)
		}
		require.NoError(t, acc.err)
		lo, hi := vals[order[0]], vals[order[0]]
		for _, j := range order {
			if bytes.Compare(vals[j], lo) < 0 {
				lo = vals[j]
			}
			if bytes.Compare(vals[j], hi) > 0 {
				hi = vals[j]
			}
		}
		require.Equal(t, string(lo), string(acc.min), "%v", order)
		require.Equal(t, string(hi), string(acc.max), "%v", order)
	}
}
