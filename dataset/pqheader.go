package dataset

import (
	"errors"
	"fmt"
)

// The guard's decoder of Parquet page headers: the thrift compact protocol,
// read as the thrift library reads it, into the fields of a page header that
// the guard checks and the page path reads pages by.

// Page types (parquet.thrift's PageType).
const (
	pageTypeData   = 0
	pageTypeDict   = 2
	pageTypeDataV2 = 3
)

// pageHeader is what the guard reads of a page header (parquet.thrift's
// PageHeader, with the fields of its data, data v2 or dictionary page
// header).
type pageHeader struct {
	typ, uncompressed, compressed int32
	// which of the above and of the headers below were present
	hasType, hasUncompressed, hasCompressed bool
	hasData, hasDataV2, hasDict             bool

	numValues, encoding int32 // of the page header of the page's type
	defEncoding         int32 // data page v1
	repEncoding         int32 // data page v1
	defBytes, repBytes  int32 // data page v2
	isCompressed        bool  // data page v2 (true unless said otherwise)
}

// The thrift compact protocol's types.
const (
	ctStop = iota
	ctTrue
	ctFalse
	ctByte
	ctI16
	ctI32
	ctI64
	ctDouble
	ctBinary
	ctList
	ctSet
	ctMap
	ctStruct
	ctUUID
)

// maxThriftDepth is how deep the guard follows nested thrift values, as
// the thrift library does.
const maxThriftDepth = 64

var errHeaderShort = errors.New("page header cut short")

// compact decodes the thrift compact protocol as the thrift library does
// (varints of any length, truncated to their type).
type compact struct {
	b   []byte
	pos int
	err error // the first error; errHeaderShort when the bytes ran out
	// hdrAt is where the header of the field fields called back last
	// starts, hdrPrev the id of the field before it (the base of a short
	// header's delta).
	hdrAt   int
	hdrPrev int16
}

func (c *compact) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

func (c *compact) byte() byte {
	if c.err != nil {
		return 0
	}
	if c.pos >= len(c.b) {
		c.fail(errHeaderShort)
		return 0
	}
	c.pos++
	return c.b[c.pos-1]
}

func (c *compact) skipBytes(n int64) {
	if c.err != nil {
		return
	}
	if n < 0 {
		c.fail(fmt.Errorf("a thrift value of %d bytes", n))
		return
	}
	if n > int64(len(c.b)-c.pos) {
		c.pos = len(c.b)
		c.fail(errHeaderShort)
		return
	}
	c.pos += int(n)
}

func (c *compact) varint() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		b := c.byte()
		if c.err != nil {
			return 0
		}
		if shift < 64 {
			v |= uint64(b&0x7f) << shift
		}
		if b&0x80 == 0 {
			return v
		}
	}
}

func (c *compact) i32() int32 {
	n := int32(c.varint())
	return int32(uint32(n)>>1) ^ -(n & 1)
}

// fields reads the fields of a struct up to its stop, calling field with
// the id and type of each; field reads the value or skips it.
func (c *compact) fields(field func(id int16, typ byte)) {
	var last int16
	for {
		at := c.pos
		b := c.byte()
		if c.err != nil || b == ctStop {
			return
		}
		c.hdrAt, c.hdrPrev = at, last
		id := last + int16(b>>4)
		if b>>4 == 0 {
			id = int16(c.i32()) // (as the thrift library reads an i16)
		}
		last = id
		field(id, b&0x0f)
		if c.err != nil {
			return
		}
	}
}

// skip skips a value of type typ; a bool field's value is its type, one in
// a collection a byte.
func (c *compact) skip(typ byte, inCollection bool, depth int) {
	if depth > maxThriftDepth {
		c.fail(errors.New("thrift values nested too deep"))
		return
	}
	switch typ {
	case ctTrue, ctFalse:
		if inCollection {
			c.byte()
		}
	case ctByte:
		c.byte()
	case ctI16, ctI32, ctI64:
		c.varint()
	case ctDouble:
		c.skipBytes(8)
	case ctUUID:
		c.skipBytes(16)
	case ctBinary:
		c.skipBytes(int64(int32(c.varint())))
	case ctList, ctSet:
		b := c.byte()
		n := int64(b >> 4)
		if n == 15 {
			n = int64(int32(c.varint()))
		}
		if n < 0 {
			c.fail(fmt.Errorf("a thrift list of %d values", n))
		}
		for i := int64(0); i < n && c.err == nil; i++ { // each takes a byte at least
			c.skip(b&0x0f, true, depth+1)
		}
	case ctMap:
		n := int64(int32(c.varint()))
		if n < 0 {
			c.fail(fmt.Errorf("a thrift map of %d values", n))
		}
		if n > 0 {
			kv := c.byte()
			for i := int64(0); i < n && c.err == nil; i++ {
				c.skip(kv>>4, true, depth+1)
				c.skip(kv&0x0f, true, depth+1)
			}
		}
	case ctStruct:
		c.fields(func(_ int16, t byte) { c.skip(t, false, depth+1) })
	default:
		c.fail(fmt.Errorf("thrift type %d", typ))
	}
}

// int32Field reads an i32 field into v (skipping one of another type, as
// the generated code does) and says whether it was one.
func (c *compact) int32Field(typ byte, v *int32) bool {
	if typ != ctI32 {
		c.skip(typ, false, 1)
		return false
	}
	*v = c.i32()
	return true
}

// headerParsed, when set (by tests, before any reading starts), is called
// at each call of parsePageHeader.
var headerParsed func()

// parsePageHeader decodes the page header at the front of b and returns
// its length; errHeaderShort when b ends first.
func parsePageHeader(b []byte) (h pageHeader, n int, err error) {
	if headerParsed != nil {
		headerParsed()
	}
	c := &compact{b: b}
	h.isCompressed = true
	// sub reads the page header of the page's kind.
	sub := func(typ byte, found *bool, field func(id int16, typ byte)) {
		if typ != ctStruct {
			c.skip(typ, false, 1)
			return
		}
		*found = true
		c.fields(field)
	}
	c.fields(func(id int16, typ byte) {
		switch id {
		case 1:
			h.hasType = c.int32Field(typ, &h.typ)
		case 2:
			h.hasUncompressed = c.int32Field(typ, &h.uncompressed)
		case 3:
			h.hasCompressed = c.int32Field(typ, &h.compressed)
		case 5:
			sub(typ, &h.hasData, func(id int16, typ byte) {
				switch id {
				case 1:
					c.int32Field(typ, &h.numValues)
				case 2:
					c.int32Field(typ, &h.encoding)
				case 3:
					c.int32Field(typ, &h.defEncoding)
				case 4:
					c.int32Field(typ, &h.repEncoding)
				default:
					c.skip(typ, false, 2)
				}
			})
		case 7:
			sub(typ, &h.hasDict, func(id int16, typ byte) {
				switch id {
				case 1:
					c.int32Field(typ, &h.numValues)
				case 2:
					c.int32Field(typ, &h.encoding)
				default:
					c.skip(typ, false, 2)
				}
			})
		case 8:
			sub(typ, &h.hasDataV2, func(id int16, typ byte) {
				switch id {
				case 1:
					c.int32Field(typ, &h.numValues)
				case 4:
					c.int32Field(typ, &h.encoding)
				case 5:
					c.int32Field(typ, &h.defBytes)
				case 6:
					c.int32Field(typ, &h.repBytes)
				case 7:
					if typ == ctTrue || typ == ctFalse {
						h.isCompressed = typ == ctTrue
					} else {
						c.skip(typ, false, 2)
					}
				default:
					c.skip(typ, false, 2)
				}
			})
		default:
			c.skip(typ, false, 1)
		}
	})
	if c.err != nil {
		return h, 0, c.err
	}
	if !h.hasType || !h.hasUncompressed || !h.hasCompressed {
		return h, 0, errors.New("corrupt page header (a required field is missing)")
	}
	return h, c.pos, nil
}
