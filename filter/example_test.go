package filter_test

import (
	"encoding/binary"
	"fmt"

	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/filter"
)

func Example() {
	e, err := filter.Parse(`price > 10.5 and region in ("EU", 'US') or not (qty is not null)`)
	if err != nil {
		panic(err)
	}
	fmt.Println(e)
	fmt.Println(filter.Columns(e))

	prices := []int64{5, 11, 20, 10}
	price := &column.View{Kind: column.Int64, Len: 4, Values: bytesOf(prices)}
	region := &column.View{Kind: column.Binary, Len: 4, Values: []byte("EUUSFREU"),
		Offsets: bytesOf([]int32{0, 2, 4, 6, 8})}
	qty := &column.View{Kind: column.Int32, Len: 4, Values: make([]byte, 16), Validity: []byte{0b0111}, NullCount: 1}
	p, err := filter.Bind(e, []filter.Input{{Name: "price", Kind: column.Int64}, {Name: "region", Kind: column.Binary},
		{Name: "qty", Kind: column.Int32}})
	if err != nil {
		panic(err)
	}
	var s filter.Scratch
	out := make([]uint64, 1)
	n, err := p.Select(&s, []*column.View{price, region, qty}, 0, 4, out)
	fmt.Printf("%d rows: %04b %v\n", n, out[0], err)

	_, err = filter.Parse(`price > 10 foo`)
	fmt.Println(err)
	// Output:
	// price > 10.5 and region in ("EU", "US") or not qty is not null
	// [price region qty]
	// 2 rows: 1010 <nil>
	// where: at offset 11 near "foo": expected AND, OR or the end of the predicate
}

func bytesOf[T int32 | int64](v []T) []byte {
	b, err := binary.Append(nil, binary.LittleEndian, v)
	if err != nil {
		panic(err)
	}
	return b
}
