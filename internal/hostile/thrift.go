package hostile

import "encoding/binary"

// The thrift compact protocol, written: enough of it for Parquet page
// headers and footers, with any value in any field (the point is to write
// what writers would not).

const (
	ctI32    = 5
	ctI64    = 6
	ctBinary = 8
	ctList   = 9
	ctStruct = 12
)

// tw writes thrift compact values into b.
type tw struct {
	b    []byte
	last []int16 // the last field id of each struct being written
}

func (w *tw) varint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }

func (w *tw) field(id int16, typ byte) {
	top := &w.last[len(w.last)-1]
	if d := id - *top; d > 0 && d <= 15 {
		w.b = append(w.b, byte(d)<<4|typ)
	} else {
		w.b = append(w.b, typ)
		w.varint(uint64((int64(id) << 1) ^ (int64(id) >> 63)))
	}
	*top = id
}

func zigzag(v int64) uint64 { return uint64((v << 1) ^ (v >> 63)) }

func (w *tw) begin() { w.last = append(w.last, 0) }

func (w *tw) end() {
	w.b = append(w.b, 0)
	w.last = w.last[:len(w.last)-1]
}

func (w *tw) i32(id int16, v int32) {
	w.field(id, ctI32)
	w.varint(zigzag(int64(v)))
}

func (w *tw) i64(id int16, v int64) {
	w.field(id, ctI64)
	w.varint(zigzag(v))
}

func (w *tw) str(id int16, s string) {
	w.field(id, ctBinary)
	w.varint(uint64(len(s)))
	w.b = append(w.b, s...)
}

// structField starts a struct-valued field; end it with end.
func (w *tw) structField(id int16) {
	w.field(id, ctStruct)
	w.begin()
}

// list starts a list field of n values of type typ.
func (w *tw) list(id int16, typ byte, n int) {
	w.field(id, ctList)
	if n < 15 {
		w.b = append(w.b, byte(n)<<4|typ)
	} else {
		w.b = append(w.b, 0xf0|typ)
		w.varint(uint64(n))
	}
}

// elemI32 writes an i32 list element.
func (w *tw) elemI32(v int32) { w.varint(zigzag(int64(v))) }

// elemStr writes a string list element.
func (w *tw) elemStr(s string) {
	w.varint(uint64(len(s)))
	w.b = append(w.b, s...)
}
