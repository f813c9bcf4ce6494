package dataset_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/dataset"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/report"
)

// Aggregate two columns of every data file of a directory and print them as
// JSON.
func Example() {
	ctx := context.Background()
	sources, err := dataset.Expand([]string{"../testdata"})
	if err != nil {
		log.Fatal(err)
	}
	ds, err := dataset.Open(ctx, sources, dataset.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer ds.Close()
	sel, err := ds.Select([]string{"u64", "point.a"})
	if err != nil {
		log.Fatal(err)
	}
	eng, err := engine.New(engine.WithDevice(engine.DeviceCPU))
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	aggs := agg.Sum | agg.Max
	sum, err := ds.Aggregate(ctx, eng, sel, dataset.AggregateOptions{Aggs: aggs})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(sum.Results), "columns")
	if err := report.Write(os.Stdout, report.JSON, report.Report{Rows: sum.Rows, Files: sum.Files, Aggs: aggs, Columns: sum.Results}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// 2 columns
	// {
	//   "rows": 2300,
	//   "files": 3,
	//   "columns": [
	//     {"name": "u64", "type": "uint64", "count": null, "null_count": null, "sum": 30008097751808265938012, "min": null, "max": 18438092771571197224, "mean": null},
	//     {"name": "point.a", "type": "int32", "count": null, "null_count": null, "sum": -41045, "min": null, "max": 1000, "mean": null}
	//   ]
	// }
}
