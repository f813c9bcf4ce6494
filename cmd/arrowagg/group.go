package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

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
		if err := writeRecord(opts.output, sum.Groups); err != nil {
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

// outputFormat is the format of an --output file, from its name: "parquet"
// or "arrow".
func outputFormat(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".parquet":
		return "parquet", nil
	case ".arrow", ".feather", ".ipc":
		return "arrow", nil
	}
	return "", fmt.Errorf("%s: want a name ending in .parquet, .arrow, .feather or .ipc", path)
}

// writeRecord writes rec to path in the format of its name (outputFormat):
// Parquet (snappy) or an Arrow IPC file. A failed write removes the file.
func writeRecord(path string, rec arrow.Record) (err error) {
	format, err := outputFormat(path)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--output: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("--output %s: %w", path, cerr)
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	switch format {
	case "parquet":
		w, err := pqarrow.NewFileWriter(rec.Schema(), struct{ io.Writer }{f}, parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy)),
			pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		if err != nil {
			return fmt.Errorf("--output %s: %w", path, err)
		}
		if err := w.Write(rec); err != nil {
			w.Close()
			return fmt.Errorf("--output %s: %w", path, err)
		}
		if err := w.Close(); err != nil {
			return fmt.Errorf("--output %s: %w", path, err)
		}
	default:
		w, err := ipc.NewFileWriter(f, ipc.WithSchema(rec.Schema()))
		if err != nil {
			return fmt.Errorf("--output %s: %w", path, err)
		}
		if err := w.Write(rec); err != nil {
			w.Close()
			return fmt.Errorf("--output %s: %w", path, err)
		}
		if err := w.Close(); err != nil {
			return fmt.Errorf("--output %s: %w", path, err)
		}
	}
	return nil
}
