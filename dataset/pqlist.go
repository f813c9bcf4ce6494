package dataset

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/arrowagg/arrowagg/agg"
	"github.com/arrowagg/arrowagg/column"
	"github.com/arrowagg/arrowagg/engine"
)

// listReason is the plan's reason for the lists and maps of a Parquet file,
// counted from their levels.
const listReason = "parquet list levels counted on the cpu"

// listGPUReason and listSplitReason: listReason's counts taken on the GPU,
// all or some.
const (
	listGPUReason   = "parquet list levels read on the cpu, counted on the gpu"
	listSplitReason = "parquet list levels read on the cpu, counted on the cpu and the gpu"
)

// listChunk counts the lists (or maps) of leaf l in row group rg: a row's
// list is null where its definition level says that it, or a struct
// around it, is null, which the levels of any Parquet leaf column under
// it tell; l.col is the first. That column is read by a leaf reader of its
// own (newLeafFileReader: in this goroutine, never through pqarrow's
// nested readers), batch by batch, and the lists' validity made from its
// levels as pqarrow's list reader makes it (file.DefRepLevelsToListInfo,
// with the list's levels); the values it decodes are not read. Each batch
// of lists is an Opaque view folded by the engine. The lists of an element
// column (the inner lists of "a[]", a list of lists) are those whose
// enclosing lists' elements exist, as many as the levels at most.
func (r *parquetRun) listChunk(ctx context.Context, fr *pqarrow.FileReader, rg int, l *parquetLeaf, rows int64) (chunkResult, error) {
	start := time.Now()
	cr, err := fr.GetFieldReader(ctx, l.col, map[int]bool{l.col: true}, []int{rg})
	if err != nil {
		return chunkResult{}, err
	}
	if cr == nil {
		return chunkResult{}, fmt.Errorf("no reader for Parquet leaf column %d", l.col)
	}
	defer cr.Release()
	res := chunkResult{state: agg.New(column.FamilyCounts, r.aggs),
		plan: engine.ColumnPlan{Source: engine.SourceArrow, Reason: listReason}} // on the CPU, in host memory
	batch := r.batchRows(rg, l, rows)
	valid := make([]byte, bitutil.BytesForBits(batch))
	pos := int64(0) // lists so far: rows, or elements of the lists around them
	for done := int64(0); done < rows; {
		if err := ctx.Err(); err != nil {
			return chunkResult{}, err
		}
		n := min(batch, rows-done)
		if err := cr.LoadBatch(n); err != nil {
			return chunkResult{}, err
		}
		defs, err := cr.GetDefLevels()
		if err != nil {
			return chunkResult{}, err
		}
		reps, err := cr.GetRepLevels()
		if err != nil {
			return chunkResult{}, err
		}
		if len(reps) != len(defs) {
			return chunkResult{}, fmt.Errorf("%d repetition levels for %d definition levels", len(reps), len(defs))
		}
		bound, read := n, int64(0)
		if l.elem { // lists in lists: up to one per level
			bound = int64(len(defs))
			valid = grow(valid, int(bitutil.BytesForBits(bound)))
		}
		out := file.ValidityBitmapInputOutput{ReadUpperBound: bound, ValidBits: valid}
		if err := file.DefRepLevelsToListInfo(defs, reps, *l.list, &out, nil); err != nil {
			return chunkResult{}, err
		}
		if read = out.Read; l.elem {
			read = rowsOf(reps)
		}
		if read == 0 || read > n {
			return chunkResult{}, fmt.Errorf("%w: decoded %d rows where %d were left", errShortDecode, read, rows-done)
		}
		v := column.View{Type: l.typ, Kind: column.Opaque, Len: int(out.Read), NullCount: int(out.NullCount), Row: pos}
		if v.NullCount > 0 {
			v.Validity = valid
		}
		if err := res.foldView(ctx, r.eng, &v); err != nil {
			return chunkResult{}, err
		}
		res.plan.Bytes += v.ByteSize()
		pos += out.Read
		done += read
	}
	res.plan.Measured = time.Since(start)
	res.onDevice(listGPUReason, listSplitReason)
	return res, nil
}
