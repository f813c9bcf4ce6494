package dataset

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column/arrow17"
	"github.com/arrowagg/arrowagg/engine"
)

// arrow-go's Parquet decoders panic on some corrupt bytes; the readers
// recover those panics into errors, which they can only do for code that
// runs in goroutines of their own. pqarrow reads the leaves of a struct from
// goroutines it starts (an errgroup, even with Parallel off), both when it
// builds a struct's reader and in each LoadBatch: a panic there ends the
// process. So no column is read through a pqarrow struct reader: every leaf,
// nested or not, gets a reader of its own (newLeafFileReader), and all of
// arrow-go's decoding runs in the worker that recovers its panics.

// newLeafFileReader returns a pqarrow reader of the Parquet file pf whose
// top-level fields are the file's leaf columns, field i being leaf column i
// (the BYTE_ARRAY columns dictCols read as dictionary arrays),
// with the levels (LevelInfo) it has in the file's schema. Field readers of
// it are pqarrow's leaf readers, which decode in the caller's goroutine, and
// read a nested leaf into the array that the struct reader would hold as
// that leaf's child: null wherever the leaf or one of its ancestors is (the
// definition levels of the leaf say so), the leaf's values elsewhere.
//
// pqarrow resolves the fields of FileReader.GetFieldReader in the exported
// FileReader.Manifest: the manifest is replaced by one with the leaves as
// fields (the other fields of the manifest are kept as they are).
func newLeafFileReader(pf *file.Reader, mem memory.Allocator, dictCols ...int) (*pqarrow.FileReader, error) {
	props := pqarrow.ArrowReadProperties{}
	for _, col := range dictCols {
		props.SetReadDict(col, true)
	}
	fr, err := pqarrow.NewFileReader(pf, props, mem)
	if err != nil {
		return nil, err
	}
	n := pf.MetaData().Schema.NumColumns()
	leaves := *fr.Manifest
	leaves.Fields = make([]pqarrow.SchemaField, n)
	for col := 0; col < n; col++ {
		sf, ok := fr.Manifest.ColIndexToField[col]
		if !ok || sf == nil || sf.Field == nil || !sf.IsLeaf() || len(sf.Children) != 0 {
			return nil, fmt.Errorf("no Arrow field for Parquet leaf column %d", col)
		}
		leaves.Fields[col] = *sf
	}
	fr.Manifest = &leaves
	return fr, nil
}

// arrowChunk decodes the chunk of leaf l in row group rg into Arrow arrays
// through pqarrow, batch by batch, and aggregates them with the engine. fr
// is a newLeafFileReader: the leaf is read by a leaf reader of its own, in
// this goroutine, whether or not it is nested in a struct. For an element
// column (l.elem) the arrays are the elements, which the engine folds as a
// flat column: the state's positions are elements of the chunk.
func (r *parquetRun) arrowChunk(ctx context.Context, fr *pqarrow.FileReader, rg int, l *parquetLeaf, rows int64) (chunkResult, error) {
	cr, err := fr.GetFieldReader(ctx, l.col, map[int]bool{l.col: true}, []int{rg})
	if err != nil {
		return chunkResult{}, err
	}
	if cr == nil {
		return chunkResult{}, fmt.Errorf("no reader for Parquet leaf column %d", l.col)
	}
	defer cr.Release()
	// The leaf under its dotted name; nullable, since a leaf that is
	// required in a struct that is not has nulls.
	field := *cr.Field()
	field.Name, field.Nullable = l.name, true
	lt, counted := l.typ.(*logicalType) // (an unknown logical type: its arrays counted, pqlogical.go)
	if counted {
		field.Type = lt
	}
	schema := arrow.NewSchema([]arrow.Field{field}, nil)
	acc, err := r.eng.NewAccumulator(schema, engine.Request{Columns: []string{l.name}, Aggs: r.aggs})
	if err != nil {
		return chunkResult{}, err
	}
	batch := r.batchRows(rg, l, rows)
	for done := int64(0); done < rows; {
		if err := ctx.Err(); err != nil {
			return chunkResult{}, err
		}
		ch, read, err := nextBatch(cr, min(batch, rows-done), l.elem)
		if err != nil {
			return chunkResult{}, err
		}
		got := int64(0)
		for _, c := range ch.Chunks() { // more than one when the dictionary changes
			arr := c
			if counted {
				arr = array.NewExtensionArrayWithStorage(lt, c)
			}
			rec := array.NewRecord(schema, []arrow.Array{arr}, int64(c.Len()))
			err = acc.Add(ctx, rec)
			rec.Release()
			if counted {
				arr.Release()
			}
			if err != nil {
				break
			}
			got += int64(c.Len())
		}
		ch.Release()
		if err != nil {
			return chunkResult{}, err
		}
		if l.elem { // got elements, of read rows
			got = read
		}
		if got == 0 || got > rows-done {
			return chunkResult{}, fmt.Errorf("%w: decoded %d rows where %d were left", errShortDecode, got, rows-done)
		}
		done += got
	}
	return chunkResult{state: acc.States()[0], plan: acc.Plan()[0]}, nil
}

// nextBatch reads the next n rows of cr. For a leaf in lists (elem) the
// array is its elements, one per level at which its innermost list's
// element exists (pqarrow's leaf reader makes it so, as the child of the
// list array it builds), and read is the rows, the levels that start one.
func nextBatch(cr *pqarrow.ColumnReader, n int64, elem bool) (ch *arrow.Chunked, read int64, err error) {
	if !elem {
		ch, err = cr.NextBatch(n)
		return ch, 0, err
	}
	if err := cr.LoadBatch(n); err != nil {
		return nil, 0, err
	}
	reps, err := cr.GetRepLevels()
	if err != nil {
		return nil, 0, err
	}
	read = rowsOf(reps)
	ch, err = cr.BuildArray(n)
	return ch, read, err
}

// rowsOf is the number of rows the repetition levels reps hold: a level 0
// starts one.
func rowsOf(reps []int16) int64 {
	n := int64(0)
	for _, r := range reps {
		if r == 0 {
			n++
		}
	}
	return n
}

// batchRows is the number of rows of the Arrow batches of leaf l in row
// group rg: about batchBytes, a multiple of the CPU morsel when large.
func (r *parquetRun) batchRows(rg int, l *parquetLeaf, rows int64) int64 {
	return batchOf(batchBytes, r.rowBytes(rg, l, rows), rows)
}

// rowBytes is about the bytes of a row of leaf l decoded, in row group rg
// of rows rows: its width, or more as its chunk's uncompressed bytes have
// it.
func (r *parquetRun) rowBytes(rg int, l *parquetLeaf, rows int64) int64 {
	w := int64(8)
	if k, err := arrow17.KindOf(l.typ); err == nil && k.Width() > 0 {
		w = int64(k.Width())
	}
	if rcs := r.pqf.meta.RowGroups[rg].Columns; l.col < len(rcs) && rows > 0 {
		if m := rcs[l.col].GetMetaData(); m != nil {
			w = max(w, m.GetTotalUncompressedSize()/rows+1)
		}
	}
	return w
}

// batchOf is the rows of a batch of about bytes bytes, of rows of w bytes,
// of a chunk of rows rows: a multiple of the CPU morsel when large.
func batchOf(bytes, w, rows int64) int64 {
	n := bytes / max(w, 1)
	if n > engine.MorselSize {
		n -= n % engine.MorselSize
	}
	return max(min(n, rows), min(rows, minBatchRows))
}

// nullChunk is the partial aggregate of a chunk of leaf l whose rows values
// are all null (the walk over its pages found nothing else: pqwalk.go's
// nullPage), made without decoding it.
func (r *parquetRun) nullChunk(l *parquetLeaf, rows int64) (chunkResult, error) {
	k, err := arrow17.KindOf(l.typ)
	if err != nil {
		return chunkResult{}, err
	}
	st := agg.New(k.Family(), r.aggs)
	st.AddNulls(rows)
	return chunkResult{state: st}, nil
}
