package dataset

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/column/arrow17"
)

// checkParquetFooter checks the footer of the Parquet file s against
// the limits (limits.go) before arrow-go decodes it: its size, the number
// of elements, leaf columns and nesting depth of its schema, and the number
// of row groups and column chunks. It reads the thrift FileMetaData with
// the guard's compact decoder (pqheader.go), allocating nothing per
// element, and stops once it has the schema and the count of row groups.
// What it cannot make sense of is left to arrow-go, which says what is
// wrong. It returns the footer's size in bytes.
//
// A footer whose schema has logical types arrow-go v17 does not know
// (GEOMETRY, GEOGRAPHY, VARIANT, newer ones), on which arrow-go's schema
// conversion fails, comes back as a footerFix: the footer with those
// logical types hidden from arrow-go, and the columns that had them.
func checkParquetFooter(ctx context.Context, s Source) (int64, *footerFix, error) {
	f, err := s.open()
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	size := s.Size
	if size < 12 {
		return 0, nil, nil
	}
	var tail [8]byte
	if err := readFull(f, tail[:], size-8); err != nil {
		return 0, nil, err
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > MaxFooterBytes {
		return 0, nil, limitError("Parquet footer size in bytes", n, "MaxFooterBytes", MaxFooterBytes)
	}
	if n > size-12 {
		return 0, nil, nil // (arrow-go says the file is truncated)
	}
	if string(tail[4:]) == string(parquetEncrypted) {
		// An encrypted footer: arrow-go decodes it once AES-GCM has
		// authenticated it (encryption.go).
		return n, nil, nil
	}
	footer := make([]byte, n)
	if err := readFull(f, footer, size-8-n); err != nil {
		return 0, nil, err
	}
	unknown, maps, err := walkFooter(ctx, footer)
	if err != nil || len(unknown)+len(maps) == 0 || string(tail[4:]) != "PAR1" {
		return n, nil, err
	}
	fix := hideLogicalTypes(footer, unknown)
	mapsAsLists(fix.footer, maps)
	return n, fix, nil
}

// knownLogicalTypes are the members of the thrift LogicalType union that
// arrow-go v17 knows (STRING ... FLOAT16; 9 was INTERVAL, never written).
var knownLogicalTypes = map[int16]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 8: true,
	10: true, 11: true, 12: true, 13: true, 14: true, 15: true}

// logicalTypeName names member id of the LogicalType union.
func logicalTypeName(id int16) string {
	switch id {
	case 16:
		return "VARIANT"
	case 17:
		return "GEOMETRY"
	case 18:
		return "GEOGRAPHY"
	}
	return fmt.Sprintf("unknown (LogicalType union member %d)", id)
}

// The values of SchemaElement fields that mapsAsLists looks at.
const (
	repetitionOptional = 1
	convertedMap       = 1 // ConvertedType MAP
	convertedList      = 3 // ConvertedType LIST
	logicalMap         = 2 // LogicalType's MAP member
	logicalList        = 3 // LogicalType's LIST member
)

// schemaElementAt is what the footer walk keeps of a schema element: its
// repetition type, converted type (-1: none; its zigzag byte at
// convertedAt), logical type member (-1: none; its field header at
// memberAt) and number of children.
type schemaElementAt struct {
	repetition  int32
	converted   int32
	convertedAt int
	member      int16
	memberAt    int
	children    int32
}

// mapsAsLists rewrites, in footer, the MAP annotations of maps to LIST
// ones (converted type and logical type, each in place: one byte), so that
// arrow-go reads each as the list of key-value structs it is: a map whose
// keys are optional, which the format forbids but Presto, Trino and Athena
// wrote, and which arrow-go refuses ("MAP keys must be required"). The
// list's count and null count are the map's.
func mapsAsLists(footer []byte, maps []schemaElementAt) {
	for _, m := range maps {
		if m.converted == convertedMap && m.convertedAt >= 0 && footer[m.convertedAt] == 2*convertedMap {
			footer[m.convertedAt] = 2 * convertedList // (zigzag)
		}
		if m.member == logicalMap && footer[m.memberAt]>>4 == logicalMap {
			footer[m.memberAt] = logicalList<<4 | footer[m.memberAt]&0x0f
		}
	}
}

// logicalTypeField is where a schema element's logicalType field lies in
// the footer: its header at hdrAt (after a field of id hdrPrev), its value
// up to end; member is the union's member.
type logicalTypeField struct {
	hdrAt   int
	hdrPrev int16
	end     int
	member  int16
}

// unknownLogicalType is a schema element (path: its dotted names below the
// root) of a logical type arrow-go does not know.
type unknownLogicalType struct {
	path   string
	member int16
	field  logicalTypeField
}

// footerFix is a footer whose unknown logical types are hidden from
// arrow-go, and the columns that had them.
type footerFix struct {
	footer  []byte
	unknown []unknownLogicalType
}

// hideLogicalTypes returns footer with the logicalType fields of unknown
// (each the last field of its schema element) renumbered to a field id that
// SchemaElement does not have, which the thrift decoder skips: the element
// is then its physical type (and converted type, if any). A field whose
// header cannot be renumbered in place is left as it is.
func hideLogicalTypes(footer []byte, unknown []unknownLogicalType) *footerFix {
	b := append([]byte(nil), footer...)
	fix := &footerFix{footer: b}
	for _, u := range unknown {
		at := u.field.hdrAt
		switch {
		case b[at]>>4 != 0: // a short header: the id is hdrPrev + delta
			b[at] = 0xf0 | b[at]&0x0f // (hdrPrev+15: past SchemaElement's fields)
		case at+1 < len(b) && b[at+1] < 0x80: // a long one: the zigzag id in one byte
			b[at+1] = 120 // 60
		default:
			continue
		}
		fix.unknown = append(fix.unknown, u)
	}
	return fix
}

// errFooterDone stops the footer's walk once it has what it checks.
var errFooterDone = errors.New("footer checked")

// footerCheckEvery is how many thrift elements the walk reads between two
// looks at its context.
const footerCheckEvery = 4096

// checkFooterBytes checks the thrift FileMetaData in b (see
// checkParquetFooter).
func checkFooterBytes(ctx context.Context, b []byte) error {
	_, _, err := walkFooter(ctx, b)
	return err
}

// walkFooter checks the thrift FileMetaData in b (see checkParquetFooter)
// and returns its schema elements of logical types arrow-go does not know.
func walkFooter(ctx context.Context, b []byte) (unknown []unknownLogicalType, optionalKeyMaps []schemaElementAt, _ error) {
	c := &compact{b: b}
	var limitErr error
	fail := func(err error) {
		limitErr = err
		c.fail(err)
	}
	schemaSeen := false
	var last [3]schemaElementAt // the last three elements walked
	var names []string          // the names of the elements from the root down to the last one
	names = append(names, "")
	var leaves, rowGroups int64 = 0, -1
	c.fields(func(id int16, typ byte) {
		switch {
		case id == 2 && typ == ctList: // schema: list<SchemaElement>
			n, et := c.listHeader()
			if c.err != nil {
				return
			}
			if n > MaxSchemaElements {
				fail(limitError("number of Parquet schema elements", n, "MaxSchemaElements", MaxSchemaElements))
				return
			}
			// open holds, per group being walked, the children it has
			// left; its length is the depth of the next element. The
			// whole schema is walked, to report how deep it goes.
			var open []int64
			deepest := int64(0)
			for i := int64(0); i < n && c.err == nil; i++ {
				if i%footerCheckEvery == 0 {
					if err := ctx.Err(); err != nil {
						fail(err)
						return
					}
				}
				if et != ctStruct {
					c.skip(et, true, 1)
					continue
				}
				var children int32
				var name string
				lt := logicalTypeField{member: -1, end: -1}
				el := schemaElementAt{repetition: -1, converted: -1, convertedAt: -1}
				c.fields(func(id int16, typ byte) {
					switch {
					case id == 3:
						c.int32Field(typ, &el.repetition)
					case id == 6 && typ == ctI32:
						el.convertedAt = c.pos
						el.converted = c.i32()
					case id == 5:
						c.int32Field(typ, &children)
					case id == 4 && typ == ctBinary:
						n := int64(int32(c.varint()))
						start := c.pos
						c.skipBytes(n)
						if c.err == nil {
							name = string(c.b[start:c.pos])
						}
					case id == 10 && typ == ctStruct: // logicalType: a union
						lt = logicalTypeField{hdrAt: c.hdrAt, hdrPrev: c.hdrPrev, member: -1}
						c.fields(func(id int16, typ byte) {
							lt.member, el.memberAt = id, c.hdrAt
							c.skip(typ, false, 3)
						})
						lt.end = c.pos
					default:
						c.skip(typ, false, 2)
					}
				})
				if c.err != nil {
					return
				}
				if i > 0 && len(open) <= len(names) {
					names = append(names[:len(open)], name)
				}
				el.member, el.children = lt.member, children
				last[0], last[1], last[2] = last[1], last[2], el
				if m := last[0]; (m.converted == convertedMap || m.member == logicalMap) && last[1].children > 0 && last[2].repetition == repetitionOptional {
					// A MAP whose keys are optional (Presto, Trino, Athena),
					// which arrow-go refuses: read as the list of key-value
					// structs it is.
					optionalKeyMaps = append(optionalKeyMaps, m)
				}
				if lt.member >= 0 && !knownLogicalTypes[lt.member] && lt.end == c.pos-1 {
					// the element's last field (its stop right after it)
					unknown = append(unknown, unknownLogicalType{path: strings.Join(names[1:], "."), member: lt.member, field: lt})
				}
				deepest = max(deepest, int64(len(open)))
				if len(open) > 0 {
					open[len(open)-1]--
				}
				if children > 0 {
					open = append(open, int64(children))
				} else if i > 0 {
					leaves++
					if leaves > MaxColumns {
						fail(limitError("number of Parquet leaf columns", leaves, "MaxColumns", MaxColumns))
						return
					}
				}
				for len(open) > 0 && open[len(open)-1] <= 0 {
					open = open[:len(open)-1]
				}
			}
			if deepest > MaxNestingDepth {
				fail(limitError("schema nesting depth", deepest, "MaxNestingDepth", MaxNestingDepth))
				return
			}
			schemaSeen = true
			if rowGroups >= 0 {
				c.fail(errFooterDone)
			}
		case id == 4 && typ == ctList: // row_groups: list<RowGroup>
			n, et := c.listHeader()
			if c.err != nil {
				return
			}
			if n > MaxRowGroups {
				fail(limitError("number of Parquet row groups", n, "MaxRowGroups", MaxRowGroups))
				return
			}
			rowGroups = n
			if schemaSeen {
				c.fail(errFooterDone)
				return
			}
			for i := int64(0); i < n && c.err == nil; i++ {
				if i%footerCheckEvery == 0 {
					if err := ctx.Err(); err != nil {
						fail(err)
						return
					}
				}
				c.skip(et, true, 1)
			}
		default:
			c.skip(typ, false, 1)
		}
	})
	if limitErr != nil {
		return nil, nil, limitErr
	}
	if rowGroups > 0 && leaves > 0 && rowGroups*leaves > MaxColumnChunks {
		return nil, nil, limitError(fmt.Sprintf("number of Parquet column chunks (%d row groups of %d columns)", rowGroups, leaves), rowGroups*leaves, "MaxColumnChunks", MaxColumnChunks)
	}
	return unknown, optionalKeyMaps, nil // (a footer arrow-go cannot read is its error to tell)
}

// listHeader reads the header of a thrift list: its length and its
// elements' type.
func (c *compact) listHeader() (int64, byte) {
	b := c.byte()
	n := int64(b >> 4)
	if n == 15 {
		n = int64(int32(c.varint()))
	}
	if n < 0 {
		c.fail(fmt.Errorf("a thrift list of %d values", n))
	}
	return n, b & 0x0f
}

// countLeaves gives the leaves of the columns of unknown logical types (a
// column itself, or the leaves under a group of one) their logicalType: they
// are counted (count and null_count), their values not read, and their type
// names the logical type. A leaf that is a list or a map is counted as such
// already, and one left out for another reason stays so.
func (fix *footerFix) countLeaves(leaves []arrow17.Leaf) {
	if fix == nil {
		return
	}
	for i := range leaves {
		l := &leaves[i]
		for _, u := range fix.unknown {
			if l.Name == u.path || strings.HasPrefix(l.Name, u.path+".") {
				if l.Err == nil && l.Kind != column.Opaque && l.Repeated == 0 {
					name := logicalTypeName(u.member)
					if u.member != 16 && u.member != 17 && u.member != 18 {
						name = fmt.Sprintf("logical type %d", u.member)
					}
					l.Type, l.Kind, l.Err = newLogicalType(name, l.Type), column.Opaque, nil
				}
				break
			}
		}
	}
}

// unsupportedError is an error of what a reader does not support, wrapping
// arrow.ErrNotImplemented (as arrow17.KindOf's errors do).
type unsupportedError struct{ msg string }

func (e *unsupportedError) Error() string { return e.msg }
func (e *unsupportedError) Unwrap() error { return arrow.ErrNotImplemented }

func unsupported(msg string) error { return &unsupportedError{msg} }
