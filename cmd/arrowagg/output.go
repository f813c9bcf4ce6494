package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/metadata"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
)

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
// Parquet (writeParquet, on up to threads goroutines; 0: every CPU) or an
// Arrow IPC file. A failed write removes the file.
func writeRecord(path string, rec arrow.Record, threads int) (err error) {
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
	if format == "parquet" {
		if threads <= 0 {
			threads = runtime.GOMAXPROCS(0)
		}
		// (Not f itself: Parquet's writer closes an io.Closer.)
		if err := writeParquet(struct{ io.Writer }{f}, rec, outputRowGroup, threads); err != nil {
			return fmt.Errorf("--output %s: %w", path, err)
		}
		return nil
	}
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
	return nil
}

// outputRowGroup is the rows of a row group of --output's Parquet files
// (pyarrow's default; a row group is held in memory, encoded, while it is
// written).
const outputRowGroup = 1 << 20

// writeParquet writes rec to w as Parquet, as pqarrow's FileWriter does
// (its Arrow schema stored, snappy pages), in row groups of groupRows rows,
// without dictionaries (a result's keys are distinct, and most of its
// aggregates nearly so: dictionary pages were tried, and given up, for each
// column chunk, which took more than half the time). The column chunks of a
// row group are encoded at once on up to threads goroutines, into memory,
// then written in order. The columns are flat, as a grouped result's are
// (neither nested nor dictionaries).
func writeParquet(w io.Writer, rec arrow.Record, groupRows int64, threads int) error {
	mem := memory.DefaultAllocator
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(false),
		parquet.WithMaxRowGroupLength(groupRows), parquet.WithAllocator(mem))
	arrowProps := pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
	sc := rec.Schema()
	for _, f := range sc.Fields() {
		if arrow.IsNested(f.Type.ID()) || f.Type.ID() == arrow.DICTIONARY {
			return fmt.Errorf("column %q: writing %s columns is unsupported (a grouped result has none)", f.Name, f.Type)
		}
	}
	pqschema, err := pqarrow.ToParquet(sc, props, arrowProps)
	if err != nil {
		return err
	}
	meta := metadata.NewKeyValueMetadata()
	for i, k := range sc.Metadata().Keys() {
		meta.Append(k, sc.Metadata().Values()[i])
	}
	meta.Append("ARROW:schema", base64.StdEncoding.EncodeToString(flight.SerializeSchema(sc, mem)))
	fw := file.NewParquetWriter(w, pqschema.Root(), file.WithWriterProps(props), file.WithWriteMetadata(meta))
	for lo := int64(0); lo < rec.NumRows() || lo == 0; lo += groupRows {
		part := rec.NewSlice(lo, min(lo+groupRows, rec.NumRows()))
		err := writeRowGroup(&arrowProps, fw.AppendBufferedRowGroup(), part, threads)
		part.Release()
		if err != nil {
			fw.Close()
			return err
		}
	}
	return fw.Close()
}

// writeRowGroup encodes the flat columns of rec into the buffered row group
// rg, each column chunk on a goroutine of its own (with a write context of
// its own: a context's scratch buffers are not shared), up to threads at a
// time, and closes it (which writes them, in order).
func writeRowGroup(props *pqarrow.ArrowWriterProperties, rg file.BufferedRowGroupWriter, rec arrow.Record, threads int) error {
	errs := make([]error, rec.NumCols())
	slots := make(chan struct{}, threads)
	var wg sync.WaitGroup
	for i, col := range rec.Columns() {
		nullable := rec.Schema().Field(i).Nullable
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			cw, err := rg.Column(i)
			if err != nil {
				errs[i] = err
				return
			}
			var def []int16
			if nullable {
				def = make([]int16, col.Len())
				for j := range def {
					if col.IsValid(j) {
						def[j] = 1
					}
				}
			} else if col.NullN() > 0 {
				errs[i] = fmt.Errorf("column %q: %d nulls in a column that is not nullable", rec.ColumnName(i), col.NullN())
				return
			}
			ctx := pqarrow.NewArrowWriteContext(context.Background(), props)
			if err := pqarrow.WriteArrowToColumn(ctx, cw, col, def, nil, nullable); err != nil {
				errs[i] = fmt.Errorf("column %q: %w", rec.ColumnName(i), err)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		rg.Close()
		return err
	}
	return rg.Close()
}
