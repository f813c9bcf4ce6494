package dataset

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/arrowagg/arrowagg/column/arrow17"
)

// A recovered panic reads as corrupt data at the place the errors wrapping
// it name; a runtime error is told in words of the data, its own text kept
// out of the message (in the CorruptError, for a bug report).
func TestPanicErrorNamesThePlace(t *testing.T) {
	err := func() (err error) {
		defer recoverTo(&err)
		var s []int
		i := 5
		_ = s[i]
		return nil
	}()
	err = inputError("f.parquet", fmt.Errorf("row group 3: column %q: page 2: %w", "x", err))
	assert.Equal(t, `f.parquet: row group 3: column "x": page 2: corrupt data: its decoder failed on the bytes here `+
		`(detail: an offset or a length it declares lies outside the data)`, err.Error())
	var ce *CorruptError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, "runtime error: index out of range [5] with length 0", ce.Runtime)
	// Not a runtime error: a value of any type, its first line the detail.
	assert.Equal(t, "corrupt data: its decoder failed on the bytes here (detail: parquet: bad page)", panicError(errors.New("parquet: bad page\nmore")).Error())
	assert.Empty(t, panicError("parquet: bad page").(*CorruptError).Runtime)
}

// No runtime error reaches the message: whichever the panic, or the error
// of a reader that recovered one and quoted it.
func TestPanicErrorHidesRuntimeText(t *testing.T) {
	recovered := func(f func()) (p any) {
		defer func() { p = recover() }()
		f()
		return nil
	}
	n, lo := -1, 3
	var s []byte
	var m *struct{ x int }
	var zero int
	for _, tc := range []struct {
		name    string
		p       any
		meaning string
	}{
		{"makeslice", recovered(func() { _ = make([]byte, n) }), "a length or count it declares is negative or too large to allocate"},
		{"slice bounds", recovered(func() { _ = s[lo:] }), "an offset or a length it declares lies outside the data"},
		{"nil pointer", recovered(func() { _ = m.x }), "a part it needs is missing"},
		{"divide by zero", recovered(func() { _ = 1 / zero }), "a size or count it declares is zero"},
		{"quoted", "arrow/array: index out of range", "an offset or a length it declares lies outside the data"},
		{"wrapped", fmt.Errorf("arrow/ipc: unknown error while reading: %w", recovered(func() { _ = s[lo] }).(error)),
			"an offset or a length it declares lies outside the data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NotNil(t, tc.p)
			err := panicError(tc.p)
			assert.Equal(t, "corrupt data: its decoder failed on the bytes here (detail: "+tc.meaning+")", err.Error())
			for _, w := range runtimeWords {
				assert.NotContains(t, err.Error(), w)
			}
			assert.Equal(t, fmt.Sprint(tc.p), err.(*CorruptError).Runtime)
		})
	}

	// What arrow-go's IPC reader returns for a panic it recovered.
	p := recovered(func() { _ = make([]byte, n) })
	err := runtimeFailure(fmt.Errorf("arrow/ipc: unknown error while reading: %w", p.(error)))
	var ce *CorruptError
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, "a length or count it declares is negative or too large to allocate", ce.Detail)
	assert.Contains(t, ce.Runtime, "makeslice: len out of range")
	plain := errors.New("corrupt Arrow IPC stream: a second schema message")
	assert.Same(t, plain, runtimeFailure(plain))
	assert.NoError(t, runtimeFailure(nil))
}

// manyLeaves is a dataset of one source of n int32 leaves (probed without
// a file).
func manyLeaves(t *testing.T, n int) *Dataset {
	fields := make([]arrow.Field, n)
	names := make([]string, n)
	for i := range fields {
		names[i] = "c" + strconv.Itoa(i)
		fields[i] = arrow.Field{Name: names[i], Type: arrow.PrimitiveTypes.Int32}
	}
	schema := arrow.NewSchema(fields, nil)
	leaves, err := arrow17.LeavesContext(context.Background(), schema, leafLimits)
	require.NoError(t, err)
	return &Dataset{sources: []Source{{Path: "wide.parquet", Format: Parquet}},
		files: []fileInfo{{schema: schema, leaves: leaves, index: arrow17.NewIndex(leaves)}}}
}

// Selecting 100,000 columns by name took 43 s: a linear lookup per name.
func TestSelectManyIsLinear(t *testing.T) {
	const n = 100000
	d := manyLeaves(t, n)
	names := make([]string, n)
	for i := range names {
		names[i] = "c" + strconv.Itoa(n-1-i)
	}
	start := time.Now()
	sel, err := d.Select(names)
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
	require.Len(t, sel.Leaves, n)
	assert.Equal(t, "c0", sel.Leaves[n-1].Name)
	sel, err = d.Select(nil)
	require.NoError(t, err)
	assert.Len(t, sel.Leaves, n)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = d.SelectContext(ctx, names)
	assert.ErrorIs(t, err, context.Canceled)
}

// The footer check refuses what is beyond the limits, naming them, and
// leaves what it cannot read to arrow-go.
func TestCheckFooterBytes(t *testing.T) {
	ctx := context.Background()
	// FileMetaData{schema: [root(1 child), g(1 child) x depth-1, leaf]}
	footer := func(depth int, rowGroups int) []byte {
		var b []byte
		list := func(id int, n int) { // a list of structs, field id after id-1
			b = append(b, 0x19) // field delta 1, list
			if n < 15 {
				b = append(b, byte(n)<<4|0x0c)
			} else {
				b = append(b, 0xfc)
				for v := uint(n); ; v >>= 7 {
					if v < 0x80 {
						b = append(b, byte(v))
						break
					}
					b = append(b, byte(v)|0x80)
				}
			}
		}
		b = append(b, 0x15, 2) // version: i32 1
		list(2, depth+1)
		for i := 0; i < depth; i++ {
			b = append(b, 0x55, 2, 0) // num_children (field 5): 1
		}
		b = append(b, 0x15, 2, 0) // the leaf: type INT32
		b = append(b, 0x16, 0)    // num_rows (field 3): 0
		list(4, rowGroups)
		for i := 0; i < rowGroups; i++ {
			b = append(b, 0)
		}
		return append(b, 0)
	}
	require.NoError(t, checkFooterBytes(ctx, footer(MaxNestingDepth, 3)))
	err := checkFooterBytes(ctx, footer(MaxNestingDepth+1, 3))
	var le *arrow17.LimitError
	require.True(t, errors.As(err, &le), "%v", err)
	assert.Equal(t, "MaxNestingDepth", le.Limit)
	assert.EqualValues(t, MaxNestingDepth+1, le.Value)
	err = checkFooterBytes(ctx, footer(40000, 0))
	require.True(t, errors.As(err, &le), "%v", err)
	assert.EqualValues(t, 40000, le.Value)
	assert.NoError(t, checkFooterBytes(ctx, footer(1, 1000)))
	err = checkFooterBytes(ctx, footer(1, MaxRowGroups+1))
	require.True(t, errors.As(err, &le), "%v", err)
	assert.Equal(t, "MaxRowGroups", le.Limit)
	assert.NoError(t, checkFooterBytes(ctx, []byte{0x19}), "cut short: arrow-go's to tell")
}
