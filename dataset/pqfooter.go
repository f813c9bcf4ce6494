package dataset

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
)

// checkParquetFooter checks the footer of the Parquet file s against
// the limits (limits.go) before arrow-go decodes it: its size, the number
// of elements, leaf columns and nesting depth of its schema, and the number
// of row groups and column chunks. It reads the thrift FileMetaData with
// the guard's compact decoder (pqheader.go), allocating nothing per
// element, and stops once it has the schema and the count of row groups.
// What it cannot make sense of is left to arrow-go, which says what is
// wrong. It returns the footer's size in bytes.
func checkParquetFooter(ctx context.Context, s Source) (int64, error) {
	f, err := s.open()
	if err != nil {
		return 0, err
	}
	defer f.Close()
	size := s.Size
	if size < 12 {
		return 0, nil
	}
	var tail [8]byte
	if err := readFull(f, tail[:], size-8); err != nil {
		return 0, err
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > MaxFooterBytes {
		return 0, limitError("Parquet footer size in bytes", n, "MaxFooterBytes", MaxFooterBytes)
	}
	if n > size-12 {
		return 0, nil // (arrow-go says the file is truncated)
	}
	footer := make([]byte, n)
	if err := readFull(f, footer, size-8-n); err != nil {
		return 0, err
	}
	return n, checkFooterBytes(ctx, footer)
}

// errFooterDone stops the footer's walk once it has what it checks.
var errFooterDone = errors.New("footer checked")

// footerCheckEvery is how many thrift elements the walk reads between two
// looks at its context.
const footerCheckEvery = 4096

// checkFooterBytes checks the thrift FileMetaData in b (see
// checkParquetFooter).
func checkFooterBytes(ctx context.Context, b []byte) error {
	c := &compact{b: b}
	var limitErr error
	fail := func(err error) {
		limitErr = err
		c.fail(err)
	}
	schemaSeen := false
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
				c.fields(func(id int16, typ byte) {
					if id == 5 {
						c.int32Field(typ, &children)
					} else {
						c.skip(typ, false, 2)
					}
				})
				if c.err != nil {
					return
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
		return limitErr
	}
	if rowGroups > 0 && leaves > 0 && rowGroups*leaves > MaxColumnChunks {
		return limitError(fmt.Sprintf("number of Parquet column chunks (%d row groups of %d columns)", rowGroups, leaves), rowGroups*leaves, "MaxColumnChunks", MaxColumnChunks)
	}
	return nil // (a footer arrow-go cannot read is its error to tell)
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
