package dataset

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
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
// top-level fields are the file's leaf columns, field i being leaf column i,
// with the levels (LevelInfo) it has in the file's schema. Field readers of
// it are pqarrow's leaf readers, which decode in the caller's goroutine, and
// read a nested leaf into the array that the struct reader would hold as
// that leaf's child: null wherever the leaf or one of its ancestors is (the
// definition levels of the leaf say so), the leaf's values elsewhere.
//
// pqarrow resolves the fields of FileReader.GetFieldReader in the exported
// FileReader.Manifest: the manifest is replaced by one with the leaves as
// fields (the other fields of the manifest are kept as they are).
func newLeafFileReader(pf *file.Reader, mem memory.Allocator) (*pqarrow.FileReader, error) {
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, mem)
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
