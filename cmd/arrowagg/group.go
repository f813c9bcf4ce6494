package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/dataset"
	"github.com/arrowagg/arrowagg/engine"
	"github.com/arrowagg/arrowagg/internal/bytesize"
	"github.com/arrowagg/arrowagg/internal/startup"
	"github.com/arrowagg/arrowagg/report"
)

// writeGroups aggregates the groups of --group-by, of the rows --where
// keeps, and prints them in --format.
func writeGroups(ctx context.Context, e env, opts options, ds *dataset.Dataset, eng *engine.Engine, bar *progress, skipped []dataset.Skipped) error {
	aggs := agg.Normalize(opts.aggs)
	if bad := aggs & agg.GroupsUnsupported; bad != 0 {
		return usagef("--aggs: %s not available with --group-by or --where (yet)", bad)
	}
	req := engine.GroupRequest{Keys: opts.groupBy, Columns: opts.columns, Aggs: aggs, CountRows: true,
		MemoryLimit: opts.memory, MemoryLimitName: "--memory", SpillDir: opts.spillDir}
	if opts.where != "" {
		f, err := parseWhere(opts.where)
		if err != nil {
			return err
		}
		req.Filter = f
	}
	sum, err := ds.Group(ctx, eng, req)
	if err != nil {
		return err
	}
	defer sum.Groups.Release()
	defer startup.Trace("groups written", time.Now(), nil)
	bar.stop(true)
	for _, u := range sum.Unsupported {
		bar.note(func(w io.Writer) { fmt.Fprintf(w, "arrowagg: note: skipping column %q: %v\n", u.Path, u.Err) })
	}
	for _, sk := range sum.Skipped {
		bar.note(func(w io.Writer) { fmt.Fprintf(w, "arrowagg: note: skipped %s: %v\n", sk.Path, sk.Err) })
	}
	skipped = append(skipped, sum.Skipped...)
	if opts.explain {
		fmt.Fprintf(e.stderr, "plan: %d rows of %d files, %d kept, in %d groups, ", sum.Rows, sum.Files, sum.Kept, sum.Groups.NumRows())
		if sum.GPUBatches == 0 {
			fmt.Fprint(e.stderr, "on the CPU")
		} else {
			fmt.Fprintf(e.stderr, "%d of %d batches on the GPU (the others on the CPU)", sum.GPUBatches, sum.Batches)
		}
		if sum.Spills > 0 {
			fmt.Fprintf(e.stderr, "; the groups outgrew --memory and spilled %d times, %s to %s", sum.Spills, bytesize.Format(sum.SpillBytes), opts.spillDir)
		}
		if opts.where != "" {
			fmt.Fprintf(e.stderr, "; --where skipped %d Parquet row groups (%d rows) their statistics exclude", sum.Pruned, sum.PrunedRows)
			if p := sum.Pages; p.RowGroups > 0 {
				fmt.Fprintf(e.stderr, ", and %d rows (%d pages of its columns) of the %d row groups with page indexes", p.Rows, p.Pages, p.RowGroups)
			}
			if n := sum.Pages.NotUsed; n != "" {
				fmt.Fprintf(e.stderr, "; a page index not used: %s", n)
			}
		}
		fmt.Fprintln(e.stderr)
	}
	if opts.output != "" {
		if err := writeRecord(opts.output, sum.Groups, opts.threads); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "arrowagg: wrote %d groups (%d rows, %d kept) to %s\n", sum.Groups.NumRows(), sum.Rows, sum.Kept, opts.output)
		return nil
	}
	var rs []report.Skipped
	if opts.skipBad {
		rs = make([]report.Skipped, len(skipped))
		for i, sk := range skipped {
			rs[i] = report.Skipped{Path: sk.Path, Error: sk.Err.Error()}
		}
	}

	if sum.Results != nil { // --where alone: the columns' report, of the rows kept
		kept := sum.Kept
		err = report.Write(e.stdout, opts.format, report.Report{Rows: sum.Rows, Files: sum.Files, Kept: &kept, Aggs: aggs, Columns: sum.Results, Skipped: rs})
	} else {
		err = report.WriteGroups(e.stdout, opts.format, report.Groups{Rows: sum.Rows, Files: sum.Files, Kept: sum.Kept, Record: sum.Groups, Skipped: rs})
	}
	if err != nil {
		return fmt.Errorf("writing the %s output: %w", opts.format, err)
	}
	return nil
}
