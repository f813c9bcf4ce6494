package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/agg"
)

// spillBatches are six random batches (rows to twice rows each) of a one-word key (k, about card
// distinct values, nulls among them), a second key (j, int8) and values of
// several families; in the first batch, key 7's v values (two rows at
// least) are near int64's largest, so that its sum overflows int64 in one
// partition alone, whichever keys group it (rows 0 and 1 share every key
// and have v).
func spillBatches(mem memory.Allocator, r *rand.Rand, card, rows int) (*arrow.Schema, []arrow.Record) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "j", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "d", Type: &arrow.Decimal128Type{Precision: 20, Scale: 2}, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	var recs []arrow.Record
	for b := range 6 {
		n := rows + r.IntN(rows)
		cols := make([]arrow.Array, schema.NumFields())
		for i, f := range schema.Fields() {
			switch f.Name {
			case "k": // (rows 0 and 1 of key 7)
				kb := array.NewInt64Builder(mem)
				for row := range n {
					if row > 1 && r.IntN(50) == 0 {
						kb.AppendNull()
					} else if row <= 1 {
						kb.Append(7)
					} else {
						kb.Append(int64(r.IntN(card)))
					}
				}
				cols[i] = kb.NewArray()
				kb.Release()
			case "j": // (rows 0 and 1: the same j, so that (7, j) overflows too)
				jb := array.NewInt8Builder(mem)
				for row := range n {
					if row > 1 && r.IntN(12) == 0 {
						jb.AppendNull()
					} else if row <= 1 {
						jb.Append(1)
					} else {
						jb.Append(int8(r.IntN(3) - 1))
					}
				}
				cols[i] = jb.NewArray()
				jb.Release()
			case "v":
				vb := array.NewInt64Builder(mem)
				k := cols[0].(*array.Int64)
				for row := range n {
					switch {
					case b == 0 && row <= 1:
						vb.Append(math.MaxInt64 - int64(r.IntN(1000)))
					case r.IntN(20) == 0:
						vb.AppendNull()
					case b == 0 && k.IsValid(row) && k.Value(row) == 7:
						vb.Append(math.MaxInt64 - int64(r.IntN(1000)))
					default:
						vb.Append(r.Int64N(1<<40) - 1<<39)
					}
				}
				cols[i] = vb.NewArray()
				vb.Release()
			default:
				cols[i] = randArray(mem, r, f.Type, n, 0.05)
			}
		}
		recs = append(recs, array.NewRecord(schema, cols, int64(n)))
		for _, c := range cols {
			c.Release()
		}
	}
	return schema, recs
}

// groupAll groups recs with req on an engine of threads threads and
// returns the result; the grouper is closed.
func groupAll(t *testing.T, mem memory.Allocator, threads int, schema *arrow.Schema, recs []arrow.Record, req GroupRequest) (arrow.Record, int) {
	g, err := cpuEngine(t, mem, threads).NewGrouper(schema, req)
	require.NoError(t, err)
	defer func() { require.NoError(t, g.Close()) }()
	for _, rec := range recs {
		require.NoError(t, g.Add(context.Background(), rec))
	}
	out, err := g.Result(mem)
	require.NoError(t, err)
	times, _ := g.Spills()
	return out, times
}

// Groups that outgrow a small memory budget spill to disk, several times,
// and are read back a partition at a time: the same groups as without a
// budget (float sums to their error bound), the same bits for 1 and 3
// threads, a sum that overflows in one partition a decimal256 column in
// all, and no file left behind.
func TestGroupSpill(t *testing.T) {
	r, seed := seeded(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, c := range []struct {
		keys []string
		card int
	}{{[]string{"k"}, 3000}, {[]string{"k", "j"}, 1500}, {[]string{"k"}, 40}} {
		name := fmt.Sprintf("seed %d keys %v card %d", seed, c.keys, c.card)
		schema, recs := spillBatches(mem, r, c.card, 2000)
		req := GroupRequest{Keys: c.keys, Columns: []string{"v", "x", "d", "s"}, Aggs: agg.Default | agg.Ordered, CountRows: true}
		want, times := groupAll(t, mem, 2, schema, recs, req)
		require.Zero(t, times, name)
		dir := t.TempDir()
		req.MemoryLimitName, req.SpillDir = "--memory", dir
		var first arrow.Record
		// (A small budget loads the partitions back one at a time, a
		// larger one several at once.)
		for _, run := range []struct{ threads, limit int }{{1, 32 << 10}, {3, 32 << 10}, {3, 1 << 20}} {
			if run.limit > 32<<10 && c.card < 1000 {
				continue // (few groups: under the larger budget)
			}
			threads := run.threads
			req.MemoryLimit = int64(run.limit)
			got, times := groupAll(t, mem, threads, schema, recs, req)
			require.GreaterOrEqual(t, times, 1, "%s: spills", name)
			requireSameGroups(t, want, got)
			if i := want.Schema().FieldIndices("v_sum"); len(i) > 0 {
				require.Equal(t, arrow.DECIMAL256, want.Column(i[0]).DataType().ID(), "%s: v_sum overflows", name)
			}
			if first == nil {
				first = got
			} else if run.limit == 32<<10 {
				require.True(t, array.RecordEqual(first, got), "%s: 1 and 3 threads", name)
				got.Release()
			} else {
				got.Release()
			}
			left, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Empty(t, left, "%s: spill files left", name)
		}
		first.Release()
		want.Release()
		for _, rec := range recs {
			rec.Release()
		}
	}
}

// A spilled grouper's groups travel and merge like others (its spilled
// groups loaded first); once Result has read them back from disk the
// grouper is spent, and says so.
func TestGroupSpillMergeAndSpent(t *testing.T) {
	r, _ := seeded(t)
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema, recs := spillBatches(mem, r, 2000, 2000)
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	req := GroupRequest{Keys: []string{"k"}, Columns: []string{"v", "x", "s"}, Aggs: agg.Default | agg.Ordered, CountRows: true}
	want, _ := groupAll(t, mem, 2, schema, recs, req)
	defer want.Release()
	e := cpuEngine(t, mem, 2)
	spilled := req
	spilled.MemoryLimit, spilled.SpillDir = 32<<10, t.TempDir()
	// The first half's groups, spilled, through their binary form; the
	// second half's merged directly, spilled too.
	a, err := e.NewGrouper(schema, spilled)
	require.NoError(t, err)
	defer a.Close()
	b, err := e.NewGrouper(schema, spilled)
	require.NoError(t, err)
	defer b.Close()
	for i, rec := range recs {
		g := a
		if i >= len(recs)/2 {
			g = b
		}
		require.NoError(t, g.Add(ctx, rec))
	}
	for _, g := range []*Grouper{a, b} {
		times, bytes := g.Spills()
		require.Positive(t, times)
		require.Positive(t, bytes)
	}
	data, err := a.MarshalBinary()
	require.NoError(t, err)
	sum, err := e.NewGrouper(schema, req)
	require.NoError(t, err)
	defer sum.Close()
	require.NoError(t, sum.MergeBinary(data))
	require.NoError(t, sum.Merge(b))
	got, err := sum.Result(mem)
	require.NoError(t, err)
	defer got.Release()
	requireSameGroups(t, want, got)

	// Result of a spilled grouper reads its groups back once.
	c, err := e.NewGrouper(schema, spilled)
	require.NoError(t, err)
	defer c.Close()
	for _, rec := range recs {
		require.NoError(t, c.Add(ctx, rec))
	}
	out, err := c.Result(mem)
	require.NoError(t, err)
	requireSameGroups(t, want, out)
	out.Release()
	_, err = c.Result(mem)
	require.ErrorContains(t, err, "read out once")
	require.ErrorContains(t, c.Add(ctx, recs[0]), "read out once")
	_, err = c.MarshalBinary()
	require.ErrorContains(t, err, "read out once")
}

// Without a spill directory, groups over the budget are an error; with
// one that cannot be written, the error names it.
func TestGroupSpillDirErrors(t *testing.T) {
	r, _ := seeded(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema, recs := spillBatches(mem, r, 3000, 2000)
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	missing := t.TempDir() + "/missing"
	g, err := cpuEngine(t, mem, 2).NewGrouper(schema, GroupRequest{Keys: []string{"k"}, Columns: []string{"v"}, MemoryLimit: 16 << 10, SpillDir: missing})
	require.NoError(t, err)
	defer g.Close()
	err = g.Add(context.Background(), recs[0])
	require.ErrorContains(t, err, "spilling the groups to "+missing)
}

// Groups built partition by partition and taken in key order (the route
// of spilled groups, resultByParts) make the same record as groups built
// in key order (Result's route for groups in memory), over several
// result and gather ranges.
func TestGroupResultByParts(t *testing.T) {
	r, _ := seeded(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	defer func(n, m int) { takeRange, resultRange = n, m }(takeRange, resultRange)
	takeRange, resultRange = 3_000, 4_096 // (several ranges of each)
	schema, recs := spillBatches(mem, r, 15_000, 4_000)
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	for _, keys := range [][]string{{"k"}, {"k", "j"}, {"s"}} {
		g, err := cpuEngine(t, mem, 3).NewGrouper(schema, GroupRequest{Keys: keys, Aggs: agg.Default | agg.Ordered, CountRows: true})
		require.NoError(t, err)
		for _, rec := range recs {
			require.NoError(t, g.Add(context.Background(), rec))
		}
		require.Greater(t, g.Groups(), resultRange, "keys %v", keys)
		got, err := g.resultByParts(mem)
		require.NoError(t, err)
		want, err := g.Result(mem)
		require.NoError(t, err)
		require.True(t, array.RecordEqual(want, got), "keys %v", keys)
		if i := want.Schema().FieldIndices("v_sum"); len(keys) == 1 && keys[0] == "k" {
			require.Equal(t, arrow.DECIMAL256, got.Column(i[0]).DataType().ID(), "v_sum overflows")
		}
		want.Release()
		got.Release()
		require.NoError(t, g.Close())
	}
}

// Many one-word keys are merged from the partitions' sorted runs in
// parallel segments: the keys come out in order (numbers, then NaN, then
// null; -0 and +0 one key), each once, for every thread count.
func TestGroupSortedSegments(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(3, 5))
	const n = 400_000
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil)
	b := array.NewFloat64Builder(mem)
	distinct := map[float64]bool{}
	nulls, nans := false, false
	for i := range n {
		switch {
		case i%50_000 == 0:
			b.AppendNull()
			nulls = true
		case i%70_000 == 1:
			b.Append(math.NaN())
			nans = true
		case i%90_000 == 2:
			b.Append(math.Copysign(0, -1))
			distinct[0] = true
		default:
			x := float64(r.IntN(1_000_000)-500_000) / 8
			b.Append(x)
			distinct[x] = true
		}
	}
	arr := b.NewArray()
	b.Release()
	rec := array.NewRecord(schema, []arrow.Array{arr}, n)
	arr.Release()
	defer rec.Release()
	want := len(distinct)
	if nulls {
		want++
	}
	if nans {
		want++
	}
	for _, threads := range []int{1, 3} {
		g, err := cpuEngine(t, mem, threads).NewGrouper(schema, GroupRequest{Keys: []string{"k"}, CountRows: true})
		require.NoError(t, err)
		require.NoError(t, g.Add(context.Background(), rec))
		out, err := g.Result(mem)
		require.NoError(t, err)
		require.Equal(t, int64(want), out.NumRows())
		k := out.Column(0).(*array.Float64)
		require.True(t, k.IsNull(k.Len()-1), "null last")
		require.True(t, math.IsNaN(k.Value(k.Len()-2)), "NaN after the numbers")
		for i := 1; i < k.Len()-2; i++ {
			require.Less(t, k.Value(i-1), k.Value(i), "row %d, %d threads", i, threads)
		}
		out.Release()
	}
}

// TestGroupClose: Close frees the groups; the record Result returned stays
// valid, and using the grouper after Close is an error, not a wrong answer.
func TestGroupClose(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	kb, vb := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
	for i := range int64(1000) {
		kb.Append(i % 7)
		vb.Append(i)
	}
	k, v := kb.NewArray(), vb.NewArray()
	kb.Release()
	vb.Release()
	rec := array.NewRecord(schema, []arrow.Array{k, v}, 1000)
	k.Release()
	v.Release()
	defer rec.Release()
	e := cpuEngine(t, mem, 0)
	g, err := e.NewGrouper(schema, GroupRequest{Keys: []string{"k"}, Aggs: agg.Count | agg.Sum, CountRows: true})
	require.NoError(t, err)
	require.NoError(t, g.Add(context.Background(), rec))
	out, err := g.Result(mem)
	require.NoError(t, err)
	defer out.Release()
	require.NoError(t, g.Close())
	require.NoError(t, g.Close(), "a second Close")
	require.EqualValues(t, 7, out.NumRows())
	sums := out.Column(int(out.NumCols()) - 1).(*array.Int64)
	var total int64
	for i := range sums.Len() {
		total += sums.Value(i)
	}
	require.EqualValues(t, 999*1000/2, total, "the record outlives the grouper's states")
	_, err = g.Result(mem)
	require.ErrorContains(t, err, "closed")
	require.ErrorContains(t, g.Add(context.Background(), rec), "closed")
}
