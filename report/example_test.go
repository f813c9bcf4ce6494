package report_test

import (
	"context"
	"fmt"
	"os"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowagg/arrowagg/gpuagg"
	"github.com/arrowagg/arrowagg/report"
)

// results aggregates a small record batch of three columns on the CPU: what
// a caller of report has in hand (the command arrowagg gets the same from
// package dataset).
func results(aggs gpuagg.Agg) (rows int64, cols []gpuagg.Result, err error) {
	mem := memory.DefaultAllocator
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "price", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "city", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3, 4}, nil)
	b.Field(1).(*array.Float64Builder).AppendValues([]float64{9.5, 0, 12.25, 3}, []bool{true, false, true, true})
	b.Field(2).(*array.StringBuilder).AppendValues([]string{"Oslo", "Lima", "", "Kyiv"}, []bool{true, true, false, true})
	rec := b.NewRecord()
	defer rec.Release()

	eng, err := gpuagg.New(gpuagg.WithDevice(gpuagg.DeviceCPU))
	if err != nil {
		return 0, nil, err
	}
	defer eng.Close()
	cols, err = eng.AggregateRecord(context.Background(), rec, gpuagg.Request{Aggs: aggs})
	return rec.NumRows(), cols, err
}

// Print the same results in each format: an aligned table for people, JSON
// and CSV for programs. An aggregate that does not apply to a column (the
// sum of strings) or has no valid value is null in the table and in JSON,
// empty in CSV.
func Example() {
	aggs := gpuagg.Count | gpuagg.NullCount | gpuagg.Sum | gpuagg.Min | gpuagg.Max | gpuagg.Mean
	rows, cols, err := results(aggs)
	if err != nil {
		fmt.Println(err)
		return
	}
	r := report.Report{Rows: rows, Files: 1, Aggs: aggs, Columns: cols}
	for _, f := range []report.Format{report.Table, report.JSON, report.CSV} {
		fmt.Printf("--- %s\n", f)
		if err := report.Write(os.Stdout, f, r); err != nil {
			fmt.Println(err)
		}
	}
	// Output:
	// --- table
	// column  type     count  null_count    sum   min    max  mean
	// ------  -------  -----  ----------  -----  ----  -----  ----
	// id      int64        4           0     10     1      4   2.5
	// price   float64      3           1  24.75   3.0  12.25  8.25
	// city    utf8         3           1   null  Kyiv   Oslo  null
	// 4 rows, 1 file
	// --- json
	// {
	//   "rows": 4,
	//   "files": 1,
	//   "columns": [
	//     {"name": "id", "type": "int64", "count": 4, "null_count": 0, "sum": 10, "min": 1, "max": 4, "mean": 2.5},
	//     {"name": "price", "type": "float64", "count": 3, "null_count": 1, "sum": 24.75, "min": 3.0, "max": 12.25, "mean": 8.25},
	//     {"name": "city", "type": "utf8", "count": 3, "null_count": 1, "sum": null, "min": "Kyiv", "max": "Oslo", "mean": null}
	//   ]
	// }
	// --- csv
	// name,type,count,null_count,sum,min,max,mean
	// id,int64,4,0,10,1,4,2.5
	// price,float64,3,1,24.75,3.0,12.25,8.25
	// city,utf8,3,1,,Kyiv,Oslo,
}

// ParseFormat reads the name of a format, as the --format flag of the
// command arrowagg takes it.
func ExampleParseFormat() {
	for _, s := range []string{"table", "JSON", "csv", "xml"} {
		f, err := report.ParseFormat(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(f)
	}
	// Output:
	// table
	// json
	// csv
	// unknown format "xml" (want table, json or csv)
}
