package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/arrowagg/arrowagg/backend"
	"github.com/arrowagg/arrowagg/dataset"
	"github.com/arrowagg/arrowagg/engine"
)

// writePlan prints, per aggregated column, the backend that aggregated it,
// where its data lived, the bytes it read, the planner's estimate and the
// measured time (summed over batches), and why.
func writePlan(w io.Writer, opts options, eng *engine.Engine, sources []dataset.Source, sel dataset.Selection, sum *dataset.Summary) error {
	var input int64
	formats := map[dataset.Format]int{}
	for _, s := range sources {
		if s.Size > 0 {
			input += s.Size
		}
		formats[s.Format]++
	}
	var kinds []string
	for _, f := range []dataset.Format{dataset.Parquet, dataset.IPCFile, dataset.IPCStream} {
		if n := formats[f]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", n, f))
		}
	}
	gpu := "no GPU backend"
	if eng.HasGPU() {
		gpu = "GPU backend present"
	} else if !backend.GPUBuiltIn() {
		gpu = "this build has no CUDA backend"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "plan: device %s (%s); %d CPU threads; %d rows in %s, %d bytes on disk\n",
		opts.device, gpu, eng.Threads(), sum.Rows, strings.Join(kinds, ", "), input)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "column\ttype\tbackend\tdata in\tbytes\testimated\tmeasured\twhy")
	for i, l := range sel.Leaves {
		p := sum.Plan[i]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", l.Name, l.Type, p.BackendName(), p.LocationName(), p.Bytes,
			p.Estimated.Round(time.Microsecond), p.Measured.Round(time.Microsecond), p.Reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}
