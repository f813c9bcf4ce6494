package arrow17

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/column"
)

// Leaf is one aggregatable column of a schema: a top-level field, or a leaf field
// of a struct column named with dots ("a.b").
type Leaf struct {
	Name string
	Type arrow.DataType
	Path []int       // field indices from the schema down to the leaf
	Kind column.Kind // column.Unsupported when Err is set
	Err  error       // why the column cannot be aggregated (wrapping arrow.ErrNotImplemented), nil when it can
	// Repeated is, for an element column (path.go: "tags[]", "m{key}"),
	// the number of lists and maps it lies in (Path goes through each: 0
	// for a list's elements, 0 then 0 or 1 for a map's keys or values);
	// 0 for a column of the rows.
	Repeated int
	// SchemaName is, for a leaf whose name an earlier leaf of the schema
	// has, the name the schema gives it (dotted), and Occurrence which leaf
	// of that name it is (2 for the second); Name is then SchemaName_k
	// (see Leaves). Occurrence is 0 for the other leaves.
	SchemaName string
	Occurrence int
}

// Supported reports whether the leaf can be aggregated.
func (l Leaf) Supported() bool { return l.Err == nil }

// Leaves flattens a schema into its leaf columns, in schema order. Struct fields
// are flattened recursively with dotted names; any other nested type is one
// leaf: a list, a map or a union is an Opaque leaf (counted; KindOf).
// Names select columns, so every leaf has a name of its own: the k-th
// repeat (k = 1, 2, ...) of a name N an earlier leaf has is named N_k, k
// raised until no other leaf of the schema has that name (as DuckDB names
// the columns of a result whose names repeat); its SchemaName is N. It
// takes time and memory linear in the size of the schema and of its
// leaves' names and paths; LeavesContext bounds the schema and can be
// cancelled.
func Leaves(schema *arrow.Schema) []Leaf {
	out, _ := LeavesContext(context.Background(), schema, LeafLimits{})
	return out
}

// LeafLimits bound the schemas LeavesContext flattens; a zero field is no
// limit.
type LeafLimits struct {
	// Depth is the deepest a field may lie: 1 for a top-level field, 2 for
	// a field of a top-level struct, and so on (the children of lists, maps
	// and unions count too).
	Depth int
	// Leaves is the most leaves a schema may have.
	Leaves int
	// DepthName and LeavesName name the limits in errors.
	DepthName, LeavesName string
}

// LimitError is a schema, file or page beyond a limit that no real data
// reaches (a crafted or corrupt input).
type LimitError struct {
	What  string // what was measured ("schema nesting depth")
	Value int64  // its value (for a depth, the depth reached, at least Max+1)
	Limit string // the limit's name
	Max   int64  // the limit's value
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s of %d is beyond the limit %s = %d (refused as corrupt or hostile)", e.What, e.Value, e.Limit, e.Max)
}

// checkEvery is how many fields LeavesContext walks between two looks at its
// context.
const checkEvery = 1024

// LeavesContext is Leaves, refusing schemas beyond lim with a *LimitError
// and stopping with ctx's error when ctx is done (it looks every thousand
// fields or so). The walk keeps one path and one name buffer, extended and
// cut back level by level: a leaf's path and name are copied once, when
// the leaf is emitted, so the cost is linear in the schema and its output.
func LeavesContext(ctx context.Context, schema *arrow.Schema, lim LeafLimits) ([]Leaf, error) {
	w := leafWalk{ctx: ctx, lim: lim}
	for i, f := range schema.Fields() {
		w.path = append(w.path[:0], i)
		w.name = append(w.name[:0], f.Name...)
		if err := w.field(f, 1); err != nil {
			return nil, err
		}
	}
	if err := w.rename(); err != nil {
		return nil, err
	}
	return w.out, nil
}

// rename names the repeats of a name (Leaves): in schema order, the k-th
// repeat of N is N_k, k raised past the names of other leaves (those of
// the schema and those given before). The k tried for a name only grow, and
// a name N_k is passed over by N alone: the work is linear in the leaves.
func (w *leafWalk) rename() error {
	used := make(map[string]bool, len(w.out))
	for _, l := range w.out {
		used[l.Name] = true
	}
	type repeats struct{ seen, next int }
	var names map[string]*repeats
	for i := range w.out {
		if err := w.tick(); err != nil {
			return err
		}
		if names == nil {
			names = make(map[string]*repeats, len(w.out))
		}
		l := &w.out[i]
		r := names[l.Name]
		if r == nil {
			names[l.Name] = &repeats{seen: 1, next: 1}
			continue
		}
		r.seen++
		k := r.next
		name := l.Name + "_" + strconv.Itoa(k)
		for used[name] {
			k++
			name = l.Name + "_" + strconv.Itoa(k)
		}
		r.next = k + 1
		used[name] = true
		l.SchemaName, l.Occurrence, l.Name = l.Name, r.seen, name
		if l.Err != nil {
			l.Err = fmt.Errorf("column %q (%s in the schema): %w", name, l.Renamed(), l.Err)
		}
	}
	return nil
}

// Renamed says which leaf of its name a renamed leaf (Occurrence > 0) is:
// `the 2nd column named "ints"`; empty for the other leaves.
func (l Leaf) Renamed() string {
	if l.Occurrence == 0 {
		return ""
	}
	return fmt.Sprintf("the %s column named %q", ordinal(l.Occurrence), l.SchemaName)
}

// ordinal is n as an English ordinal: 1st, 2nd, 3rd, 4th, 11th, 21st.
func ordinal(n int) string {
	suffix := "th"
	switch n % 100 {
	case 11, 12, 13:
	default:
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}

type leafWalk struct {
	ctx    context.Context
	lim    LeafLimits
	out    []Leaf
	path   []int  // the field indices down to the current field
	name   []byte // its dotted name
	fields int    // fields walked
}

func (w *leafWalk) tick() error {
	w.fields++
	if w.fields%checkEvery == 0 {
		return w.ctx.Err()
	}
	return nil
}

func (w *leafWalk) emit(l Leaf) error {
	if w.lim.Leaves > 0 && len(w.out) >= w.lim.Leaves {
		return &LimitError{What: "number of leaf columns", Value: int64(len(w.out)) + 1, Limit: w.lim.LeavesName, Max: int64(w.lim.Leaves)}
	}
	w.out = append(w.out, l)
	return nil
}

// tooDeep is the error of field f, at depth, beyond the depth limit; it
// reports the depth f reaches.
func (w *leafWalk) tooDeep(f arrow.Field, depth int) error {
	return &LimitError{What: "schema nesting depth", Value: int64(depth - 1 + typeDepth(f.Type)), Limit: w.lim.DepthName, Max: int64(w.lim.Depth)}
}

// typeDepth is how deep the fields of t go: 1 for a type without fields.
func typeDepth(t arrow.DataType) int {
	switch t := t.(type) {
	case arrow.NestedType:
		d := 0
		for _, c := range t.Fields() {
			d = max(d, typeDepth(c.Type))
		}
		return 1 + d
	case *arrow.DictionaryType:
		return typeDepth(t.ValueType)
	case arrow.ExtensionType:
		return typeDepth(t.StorageType())
	}
	return 1
}

// field walks field f at depth (1: top level), whose path and name are
// w.path and w.name.
func (w *leafWalk) field(f arrow.Field, depth int) error {
	if err := w.tick(); err != nil {
		return err
	}
	if w.lim.Depth > 0 && depth > w.lim.Depth {
		return w.tooDeep(f, depth)
	}
	st, ok := f.Type.(*arrow.StructType)
	if !ok {
		if err := w.nested(f.Type, depth); err != nil {
			return err
		}
		name := string(w.name)
		path := append([]int(nil), w.path...)
		k, err := KindOf(f.Type)
		if err != nil {
			err = fmt.Errorf("column %q: %w", name, err)
		}
		return w.emit(Leaf{Name: name, Type: f.Type, Path: path, Kind: k, Err: err})
	}
	if st.NumFields() == 0 {
		name := string(w.name)
		return w.emit(Leaf{Name: name, Type: f.Type, Path: append([]int(nil), w.path...), Err: notImplemented(fmt.Sprintf("column %q: empty struct has no leaf to aggregate", name))})
	}
	pathLen, nameLen := len(w.path), len(w.name)
	for i := 0; i < st.NumFields(); i++ {
		c := st.Field(i) // (Fields copies them all)
		w.path = append(w.path[:pathLen], i)
		w.name = append(append(w.name[:nameLen], '.'), c.Name...)
		if err := w.field(c, depth+1); err != nil {
			return err
		}
	}
	w.path, w.name = w.path[:pathLen], w.name[:nameLen]
	return nil
}

// nested checks the depth of the types nested in t, a leaf's type (list
// elements, map entries, union children; a dictionary's value type).
func (w *leafWalk) nested(t arrow.DataType, depth int) error {
	var children []arrow.Field
	switch t := t.(type) {
	case arrow.NestedType:
		children = t.Fields()
	case *arrow.DictionaryType:
		return w.nested(t.ValueType, depth)
	case arrow.ExtensionType:
		return w.nested(t.StorageType(), depth)
	}
	for _, c := range children {
		if err := w.tick(); err != nil {
			return err
		}
		if w.lim.Depth > 0 && depth+1 > w.lim.Depth {
			return w.tooDeep(c, depth+1)
		}
		if err := w.nested(c.Type, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// Find returns the leaf named name (dotted for struct fields). It looks at
// every leaf: to look up many names, make an Index.
func Find(leaves []Leaf, name string) (Leaf, bool) {
	for _, l := range leaves {
		if l.Name == name {
			return l, true
		}
	}
	return Leaf{}, false
}

// Index finds leaves by name in constant time.
type Index map[string]int

// NewIndex indexes leaves by name (the first of a name wins, as with Find).
func NewIndex(leaves []Leaf) Index {
	ix := make(Index, len(leaves))
	for i := len(leaves) - 1; i >= 0; i-- {
		ix[leaves[i].Name] = i
	}
	return ix
}

// Find returns the position in leaves (those NewIndex indexed) of the leaf
// named name.
func (ix Index) Find(name string) (int, bool) {
	i, ok := ix[name]
	return i, ok
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
	column.View
	arr   arrow.Array // the leaf array, retained
	owned *memory.Buffer
	// An element column's elements are View, then rest (when they are not
	// contiguous in the leaf array), elems in all; their Row counts the
	// elements before them in the batch.
	rest  []column.View
	elems int64
}

// Rest are the views of an element column's elements after View's, in
// order: the elements of a batch are contiguous in the leaf array unless
// null lists cover elements (fixed_size_list nulls always do), or lists
// under null structs. Nil for a column of the rows.
func (c *Column) Rest() []column.View { return c.rest }

// Elements is the number of elements of an element column in the batch
// (the lengths of View and Rest together).
func (c *Column) Elements() int64 { return c.elems }

// StartAt adds row to the Row of the column's views (Extract leaves them
// counted from 0 in the batch): the position in the whole stream of the
// batch's first row, or for an element column of its first element.
func (c *Column) StartAt(row int64) {
	c.Row += row
	for i := range c.rest {
		c.rest[i].Row += row
	}
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
// allocated from mem. For an element column (l.Repeated > 0) the views are
// those of the elements that exist (path.go): View and Rest, their Row
// counting elements from 0 in the batch.
func Extract(c *Column, rec arrow.Record, l Leaf, mem memory.Allocator) error {
	*c = Column{}
	if l.Err != nil {
		return l.Err
	}
	if len(l.Path) == 0 || l.Path[0] >= int(rec.NumCols()) {
		return fmt.Errorf("column %q is not in the record batch", l.Name)
	}
	if l.Repeated > 0 {
		return extractElements(c, rec, l, mem)
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
