package column

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Leaf is one aggregatable column of a schema: a top-level field, or a leaf field
// of a struct column named with dots ("a.b").
type Leaf struct {
	Name string
	Type arrow.DataType
	Path []int // field indices from the schema down to the leaf
	Kind Kind  // Unsupported when Err is set
	Err  error // why the column cannot be aggregated, nil when it can
}

// Supported reports whether the leaf can be aggregated.
func (l Leaf) Supported() bool { return l.Err == nil }

// Leaves flattens a schema into its leaf columns, in schema order. Struct fields
// are flattened recursively with dotted names; any other nested type (list, map,
// union, ...) is one leaf with Err set.
func Leaves(schema *arrow.Schema) []Leaf {
	var out []Leaf
	for i, f := range schema.Fields() {
		out = appendLeaves(out, f, f.Name, []int{i})
	}
	return out
}

func appendLeaves(out []Leaf, f arrow.Field, name string, path []int) []Leaf {
	if st, ok := f.Type.(*arrow.StructType); ok {
		if st.NumFields() == 0 {
			return append(out, Leaf{Name: name, Type: f.Type, Path: path, Err: fmt.Errorf("column %q: empty struct has no leaf to aggregate", name)})
		}
		for i, c := range st.Fields() {
			p := append(append([]int(nil), path...), i)
			out = appendLeaves(out, c, name+"."+c.Name, p)
		}
		return out
	}
	k, err := KindOf(f.Type)
	if err != nil {
		err = fmt.Errorf("column %q: %w", name, err)
	}
	return append(out, Leaf{Name: name, Type: f.Type, Path: path, Kind: k, Err: err})
}

// Find returns the leaf named name (dotted for struct fields).
func Find(leaves []Leaf, name string) (Leaf, bool) {
	for _, l := range leaves {
		if l.Name == name {
			return l, true
		}
	}
	return Leaf{}, false
}

// Names lists the names of the leaves, for error messages.
func Names(leaves []Leaf) string {
	names := make([]string, len(leaves))
	for i, l := range leaves {
		names[i] = l.Name
	}
	return strings.Join(names, ", ")
}

// Column is the view of one leaf in one record batch. Release it when done: it
// may own a validity bitmap combined from enclosing structs.
type Column struct {
	View
	arr   arrow.Array // the leaf array, retained
	owned *memory.Buffer
}

// Release frees what the column holds.
func (c *Column) Release() {
	if c.arr != nil {
		c.arr.Release()
		c.arr = nil
	}
	if c.owned != nil {
		c.owned.Release()
		c.owned = nil
	}
}

// Array returns the leaf array (valid until Release).
func (c *Column) Array() arrow.Array { return c.arr }

// Extract sets c to the view of leaf l in rec; release c when done. Nulls of
// enclosing struct arrays are folded into the leaf's validity (a row whose
// struct is null is null in every leaf of it); such a combined bitmap is
// allocated from mem.
func Extract(c *Column, rec arrow.Record, l Leaf, mem memory.Allocator) error {
	*c = Column{}
	if l.Err != nil {
		return l.Err
	}
	if len(l.Path) == 0 || l.Path[0] >= int(rec.NumCols()) {
		return fmt.Errorf("column %q is not in the record batch", l.Name)
	}
	arr := rec.Column(l.Path[0])
	var parents []arrow.Array
	for _, idx := range l.Path[1:] {
		st, ok := arr.(*array.Struct)
		if !ok || idx >= st.NumField() {
			return fmt.Errorf("column %q: record batch does not match the schema", l.Name)
		}
		if st.NullN() > 0 {
			parents = append(parents, st)
		}
		arr = st.Field(idx)
	}
	if !arrow.TypeEqual(arr.DataType(), l.Type) {
		return fmt.Errorf("column %q has type %s in this batch, %s in the schema", l.Name, arr.DataType(), l.Type)
	}
	v, err := ViewOf(arr)
	if err != nil {
		return fmt.Errorf("column %q: %w", l.Name, err)
	}
	arr.Retain()
	*c = Column{View: v, arr: arr}
	if len(parents) > 0 {
		c.combineValidity(parents, mem)
	}
	return nil
}

// combineValidity ANDs the validity of the enclosing structs into a new bitmap
// (all the arrays share the same logical length and row positions).
func (c *Column) combineValidity(parents []arrow.Array, mem memory.Allocator) {
	n := c.Len
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	out := buf.Bytes()
	if c.Validity != nil {
		bitutil.CopyBitmap(c.Validity, c.ValidityOffset, n, out, 0)
	} else {
		bitutil.SetBitsTo(out, 0, int64(n), true)
	}
	for _, p := range parents {
		pv := p.Data().Buffers()[0].Bytes()
		bitutil.BitmapAnd(out, pv, 0, int64(p.Data().Offset()), out, 0, int64(n))
	}
	c.Validity, c.ValidityOffset = out, 0
	c.NullCount = n - bitutil.CountSetBits(out, 0, n)
	c.owned = buf
}
