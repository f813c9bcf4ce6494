package arrow17

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/column"
)

// Element columns: the values inside lists and maps, named by a path that
// extends the dotted names of struct leaves. After a column's name,
//
//	[]       the elements of a list (list, large_list, fixed_size_list,
//	         list_view, large_list_view), at any depth: "a[][]"
//	{key}    the keys of a map
//	{value}  the values of a map
//	.f       field f of a struct (as for struct leaves)
//
// so "tags[]", "matrix[][]", "attrs{key}", "attrs{value}", "s.l[].x". An
// element column's values are the elements of every list that is not null:
// an element under a null list, or under a null struct around a list, is
// not counted at all (it does not exist); an element that is null, or whose
// enclosing struct after the last list is null, counts as a null. Leaves
// lists no element column: they are named, not listed with the columns of
// a schema (ElementLeaves lists them).

// Path steps after a column's name.
const (
	stepElements = "[]"
	stepKeys     = "{key}"
	stepValues   = "{value}"
)

// listElem returns the element field of a list type (not a map: its
// elements are its keys and values).
func listElem(t arrow.DataType) (arrow.Field, bool) {
	if _, ok := t.(*arrow.MapType); ok {
		return arrow.Field{}, false
	}
	if lt, ok := t.(arrow.ListLikeType); ok {
		return lt.ElemField(), true
	}
	return arrow.Field{}, false
}

// ResolveElement resolves name, a path to the elements of a list or a map
// of schema ("tags[]", "m{key}", "s.l[].x"), to its Leaf; the leaf's
// Repeated is the number of lists and maps it lies in. found is false, and
// err nil, for a name that is no such path (a plain column name, or one
// that no column starts); err says why a path that starts at a column does
// not apply to it ("column "tags" is int64, not a list"). An element that
// is a struct is an error too: its fields are the columns. A name that is
// also a leaf's (a column named "x[]") is that leaf's: callers look the
// leaves up first.
func ResolveElement(schema *arrow.Schema, name string) (l Leaf, found bool, err error) {
	if !strings.ContainsAny(name, "[{") {
		return Leaf{}, false, nil
	}
	w := pathWalk{name: name}
	if l, ok := w.fields(schema.Fields(), nil, 0, 0); ok {
		return l, true, nil
	}
	return Leaf{}, false, w.err
}

// pathWalk matches a path against the fields of a schema, trying every
// field whose name the path continues with (names may hold dots and
// brackets); err is the problem met the furthest into the path.
type pathWalk struct {
	name  string
	err   error
	errAt int
}

func (w *pathWalk) fail(at int, err error) {
	if w.err == nil || at > w.errAt {
		w.err, w.errAt = err, at
	}
}

// fields matches w.name[at:] against fields, under the field indices path
// and lists lists or maps.
func (w *pathWalk) fields(fields []arrow.Field, path []int, at, lists int) (Leaf, bool) {
	rest := w.name[at:]
	for i, f := range fields {
		if f.Name == "" || !strings.HasPrefix(rest, f.Name) {
			continue
		}
		p := append(path[:len(path):len(path)], i)
		if l, ok := w.step(f.Type, p, at+len(f.Name), lists); ok {
			return l, true
		}
	}
	return Leaf{}, false
}

// step matches w.name[at:] against what follows a value of type t.
func (w *pathWalk) step(t arrow.DataType, path []int, at, lists int) (Leaf, bool) {
	rest, here := w.name[at:], w.name[:at]
	grow := func(steps ...int) []int { return append(path[:len(path):len(path)], steps...) }
	switch {
	case rest == "":
		if lists == 0 {
			return Leaf{}, false // a plain column: Leaves has it
		}
		if st, ok := t.(*arrow.StructType); ok {
			if st.NumFields() == 0 {
				w.fail(at, notImplemented(fmt.Sprintf("column %q: empty struct has no leaf to aggregate", here)))
			} else {
				w.fail(at, notImplemented(fmt.Sprintf("column %q is a struct: name one of its fields (%s.%s)", here, here, st.Field(0).Name)))
			}
			return Leaf{}, false
		}
		k, err := KindOf(t)
		if err != nil {
			err = fmt.Errorf("column %q: %w", here, err)
		}
		return Leaf{Name: w.name, Type: t, Path: grow(), Kind: k, Err: err, Repeated: lists}, true
	case strings.HasPrefix(rest, stepElements):
		elem, ok := listElem(t)
		if !ok {
			w.fail(at, w.notA(here, t, "list", stepElements))
			return Leaf{}, false
		}
		return w.step(elem.Type, grow(0), at+len(stepElements), lists+1)
	case strings.HasPrefix(rest, stepKeys), strings.HasPrefix(rest, stepValues):
		mt, ok := t.(*arrow.MapType)
		if !ok {
			w.fail(at, w.notA(here, t, "map", rest[:strings.IndexByte(rest, '}')+1]))
			return Leaf{}, false
		}
		if strings.HasPrefix(rest, stepKeys) {
			return w.step(mt.KeyType(), grow(0, 0), at+len(stepKeys), lists+1)
		}
		return w.step(mt.ItemType(), grow(0, 1), at+len(stepValues), lists+1)
	case rest[0] == '.':
		st, ok := t.(*arrow.StructType)
		if !ok {
			w.fail(at, w.notA(here, t, "struct", "."))
			return Leaf{}, false
		}
		before := w.err
		l, ok := w.fields(st.Fields(), path, at+1, lists)
		if !ok && w.err == before {
			w.fail(at+1, fmt.Errorf("column %q has no field that %q names", here, w.name))
		}
		return l, ok
	}
	return Leaf{}, false // the field's name is the start of a longer name
}

// notA is the error of a path step that does not apply to a column.
func (w *pathWalk) notA(col string, t arrow.DataType, what, step string) error {
	hint := ""
	switch {
	case isMap(t):
		hint = fmt.Sprintf(": name its keys or values, %s{key} or %s{value}", col, col)
	case isList(t):
		hint = fmt.Sprintf(": name its elements, %s[]", col)
	}
	return fmt.Errorf("column %q is %s, not a %s (%q does not apply)%s", col, t, what, step, hint)
}

func isMap(t arrow.DataType) bool { _, ok := t.(*arrow.MapType); return ok }

func isList(t arrow.DataType) bool { _, ok := listElem(t); return ok }

// ElementLeaves lists the element columns of schema, in schema order: for
// each list and map, however deep, the paths of its elements (ResolveElement
// resolves each): "tags[]", "a[]" and "a[][]" for a list of lists,
// "m{key}" and "m{value}", the fields of struct elements ("l[].x"). Struct
// elements themselves are not listed (their fields are). It walks the
// types of the schema once; the schema should have passed LeavesContext's
// limits.
func ElementLeaves(schema *arrow.Schema) []Leaf {
	var out []Leaf
	var walk func(t arrow.DataType, name string, path []int, lists int)
	walk = func(t arrow.DataType, name string, path []int, lists int) {
		grow := func(steps ...int) []int { return append(path[:len(path):len(path)], steps...) }
		if lists > 0 {
			if _, ok := t.(*arrow.StructType); !ok {
				k, err := KindOf(t)
				if err != nil {
					err = fmt.Errorf("column %q: %w", name, err)
				}
				out = append(out, Leaf{Name: name, Type: t, Path: path, Kind: k, Err: err, Repeated: lists})
			}
		}
		switch tt := t.(type) {
		case *arrow.StructType:
			for i, f := range tt.Fields() {
				walk(f.Type, name+"."+f.Name, grow(i), lists)
			}
		case *arrow.MapType:
			walk(tt.KeyType(), name+stepKeys, grow(0, 0), lists+1)
			walk(tt.ItemType(), name+stepValues, grow(0, 1), lists+1)
		default:
			if elem, ok := listElem(t); ok {
				walk(elem.Type, name+stepElements, grow(0), lists+1)
			}
		}
	}
	for i, f := range schema.Fields() {
		walk(f.Type, f.Name, []int{i}, 0)
	}
	return out
}

// span is the elements [lo, hi) of an array.
type span struct{ lo, hi int64 }

// extractElements sets c to the views of element leaf l in rec (Extract).
// It follows l.Path from the record's column down to the leaf array,
// narrowing the spans of the current array that exist: at a list, the
// ranges of the child array that its valid entries in the spans cover; at
// a struct or a list that a list follows, its valid entries. Structs after
// the last list fold their nulls into the leaf's validity, as for flat
// struct leaves. Each span of the leaf array is a view.
func extractElements(c *Column, rec arrow.Record, l Leaf, mem memory.Allocator) error {
	arr := rec.Column(l.Path[0])
	spans := []span{{0, int64(arr.Len())}}
	lists := 0 // lists crossed
	var parents []arrow.Array
	bad := func(format string, a ...any) error {
		return fmt.Errorf("column %q: %s", l.Name, fmt.Sprintf(format, a...))
	}
	for _, idx := range l.Path[1:] {
		if lists < l.Repeated && arr.NullN() > 0 {
			spans = validSpans(spans, arr)
		}
		switch a := arr.(type) {
		case *array.Struct:
			if idx >= a.NumField() {
				return bad("record batch does not match the schema")
			}
			if lists == l.Repeated && a.NullN() > 0 {
				parents = append(parents, a)
			}
			arr = a.Field(idx)
		case array.ListLike:
			if idx != 0 {
				return bad("record batch does not match the schema")
			}
			child := a.ListValues()
			var err error
			if spans, err = childSpans(spans, a, int64(child.Len())); err != nil {
				return bad("%v", err)
			}
			arr = child
			lists++
		default:
			return bad("record batch does not match the schema (%s has no fields)", arr.DataType())
		}
	}
	if lists != l.Repeated {
		return bad("record batch does not match the schema")
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
	whole := c.View
	c.View = column.View{Type: whole.Type, Kind: whole.Kind, Width: whole.Width, IndexKind: whole.IndexKind, Dict: whole.Dict}
	var row int64
	for k, s := range spans {
		seg := whole.Sub(int(s.lo), int(s.hi))
		seg.Row = row
		row += s.hi - s.lo
		if k == 0 {
			c.View = seg
		} else {
			c.rest = append(c.rest, seg)
		}
	}
	c.elems = row
	return nil
}

// validSpans narrows spans of arr to its valid entries.
func validSpans(spans []span, arr arrow.Array) []span {
	out := make([]span, 0, len(spans))
	for _, s := range spans {
		start := int64(-1)
		for i := s.lo; i < s.hi; i++ {
			if arr.IsValid(int(i)) {
				if start < 0 {
					start = i
				}
				continue
			}
			if start >= 0 {
				out = append(out, span{start, i})
				start = -1
			}
		}
		if start >= 0 {
			out = append(out, span{start, s.hi})
		}
	}
	return out
}

// childSpans is the spans of the child array (of n elements) that the
// entries of list a in spans (valid entries: validSpans) cover, adjacent
// ones merged.
func childSpans(spans []span, a array.ListLike, n int64) ([]span, error) {
	var out []span
	add := func(lo, hi int64) error {
		if lo < 0 || hi < lo || hi > n {
			return fmt.Errorf("list offsets [%d, %d) outside the %d elements of its values", lo, hi, n)
		}
		if lo == hi {
			return nil
		}
		if k := len(out) - 1; k >= 0 && out[k].hi == lo {
			out[k].hi = hi
			return nil
		}
		out = append(out, span{lo, hi})
		return nil
	}
	monotone := true // the entries' ranges follow each other: a span's is from its first's start to its last's end
	if _, ok := a.(*array.ListView); ok {
		monotone = false
	}
	if _, ok := a.(*array.LargeListView); ok {
		monotone = false
	}
	for _, s := range spans {
		if s.lo == s.hi {
			continue
		}
		if monotone {
			lo, _ := a.ValueOffsets(int(s.lo))
			_, hi := a.ValueOffsets(int(s.hi - 1))
			if err := add(lo, hi); err != nil {
				return nil, err
			}
			continue
		}
		for i := s.lo; i < s.hi; i++ {
			if err := add(a.ValueOffsets(int(i))); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
