package arrow17

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
)

// deepSchema is a struct nested depth levels deep around one int64 leaf.
func deepSchema(depth int) *arrow.Schema {
	f := arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}
	for i := 1; i < depth; i++ {
		f = arrow.Field{Name: "g", Type: arrow.StructOf(f), Nullable: true}
	}
	return arrow.NewSchema([]arrow.Field{f}, nil)
}

func TestLeavesDeepIsLinear(t *testing.T) {
	// A path copied at every level made 100,000 levels take gigabytes.
	const depth = 100000
	s := deepSchema(depth)
	start := time.Now()
	leaves := Leaves(s)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
	if len(leaves) != 1 || len(leaves[0].Path) != depth || leaves[0].Path[depth-1] != 0 {
		t.Fatalf("leaves %d, path %d", len(leaves), len(leaves[0].Path))
	}
	if want := strings.Repeat("g.", depth-1) + "x"; leaves[0].Name != want {
		t.Errorf("name of %d bytes, want %d", len(leaves[0].Name), len(want))
	}
	allocs := testing.AllocsPerRun(1, func() { Leaves(s) })
	if allocs > 100 {
		t.Errorf("%v allocations for one leaf", allocs)
	}
}

func TestLeavesContextLimits(t *testing.T) {
	lim := LeafLimits{Depth: 64, DepthName: "MaxNestingDepth", Leaves: 10, LeavesName: "MaxColumns"}
	ctx := context.Background()
	leaves, err := LeavesContext(ctx, deepSchema(64), lim)
	if err != nil || len(leaves) != 1 {
		t.Fatalf("depth 64: %v", err)
	}
	_, err = LeavesContext(ctx, deepSchema(65), lim)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "MaxNestingDepth" || le.Value != 65 || le.Max != 64 {
		t.Fatalf("depth 65: %v", err)
	}
	if !strings.Contains(err.Error(), "MaxNestingDepth") || !strings.Contains(err.Error(), "65") {
		t.Errorf("message %q", err)
	}
	// Lists count too.
	var typ arrow.DataType = arrow.PrimitiveTypes.Int32
	for i := 0; i < 70; i++ {
		typ = arrow.ListOf(typ)
	}
	_, err = LeavesContext(ctx, arrow.NewSchema([]arrow.Field{{Name: "l", Type: typ}}, nil), lim)
	if !errors.As(err, &le) || le.Value != 71 {
		t.Fatalf("lists 70 deep: %v", err)
	}
	fields := make([]arrow.Field, 11)
	for i := range fields {
		fields[i] = arrow.Field{Name: "c" + strconv.Itoa(i), Type: arrow.PrimitiveTypes.Int8}
	}
	_, err = LeavesContext(ctx, arrow.NewSchema(fields, nil), lim)
	if !errors.As(err, &le) || le.Limit != "MaxColumns" || le.Value != 11 {
		t.Fatalf("11 leaves: %v", err)
	}
	if leaves, err := LeavesContext(ctx, arrow.NewSchema(fields[:10], nil), lim); err != nil || len(leaves) != 10 {
		t.Fatalf("10 leaves: %v", err)
	}
}

func TestLeavesContextCancelled(t *testing.T) {
	fields := make([]arrow.Field, 100000)
	for i := range fields {
		fields[i] = arrow.Field{Name: "c" + strconv.Itoa(i), Type: arrow.PrimitiveTypes.Int8}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := LeavesContext(ctx, arrow.NewSchema(fields, nil), LeafLimits{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
}

func TestIndex(t *testing.T) {
	s := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int8},
		{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "b", Type: arrow.PrimitiveTypes.Int8})},
		{Name: "a", Type: arrow.PrimitiveTypes.Int16}, // a second "a": the first wins
	}, nil)
	leaves := Leaves(s)
	ix := NewIndex(leaves)
	for _, name := range []string{"a", "s.b", "nope"} {
		want, wok := Find(leaves, name)
		i, ok := ix.Find(name)
		if ok != wok || (ok && leaves[i].Name != want.Name) || (ok && !arrow.TypeEqual(leaves[i].Type, want.Type)) {
			t.Errorf("%s: index %d %v, Find %v %v", name, i, ok, want, wok)
		}
	}
}
